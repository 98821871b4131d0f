use std::path::{Path, PathBuf};

/// The environment variable naming a data root: a dataset is looked for in
/// `$SATURATE_DATA/<dataset folder>` (for example `$SATURATE_DATA/fashion-mnist`).
pub const DATA_DIR_VAR: &str = "SATURATE_DATA";

/// The data root relative to the working directory: `./data/<dataset folder>`.
pub const LOCAL_DATA_DIR: &str = "data";

/// Where a reader looks for a dataset's files, in order; the first directory holding
/// every file of the split wins, and a [`DataError::NotFound`](crate::DataError::NotFound)
/// lists every directory tried.
///
/// - [`DataSearch::from_env`]: `$SATURATE_DATA/<folder>`, then `./data/<folder>`, then
///   the system directory of a distribution package where one exists (Debian's
///   `dataset-fashion-mnist` installs `/usr/share/datasets/fashion-mnist`);
/// - [`DataSearch::in_dir`]: one explicit directory holding the files themselves, and
///   nothing else, so that a mistyped path is an error rather than other data.
///
/// ```
/// use saturate_data::{DataError, DataSearch, Mnist, Split};
///
/// let search = DataSearch::in_roots(["/nonexistent/root"]);
/// match Mnist::find(&search, Split::Train) {
///     Err(DataError::NotFound { searched, .. }) => {
///         assert_eq!(searched, [std::path::Path::new("/nonexistent/root/mnist")]);
///     }
///     other => panic!("expected NotFound, got {other:?}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSearch {
    explicit: Option<PathBuf>,
    roots: Vec<PathBuf>,
    system_dirs: bool,
}

impl DataSearch {
    /// `$SATURATE_DATA/<folder>` (when the variable is set), `./data/<folder>`, then the
    /// system directory of the dataset's distribution package, if any.
    pub fn from_env() -> Self {
        let env_root = std::env::var_os(DATA_DIR_VAR).filter(|root| !root.is_empty());
        Self::in_roots(
            env_root
                .map(PathBuf::from)
                .into_iter()
                .chain([PathBuf::from(LOCAL_DATA_DIR)]),
        )
        .with_system_dirs(true)
    }

    /// Only `dir`, which holds the dataset's files themselves (no dataset sub-folder).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            explicit: Some(dir.into()),
            roots: Vec::new(),
            system_dirs: false,
        }
    }

    /// `<root>/<folder>` for each root, in order; no system directory.
    pub fn in_roots(roots: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        Self {
            explicit: None,
            roots: roots.into_iter().map(Into::into).collect(),
            system_dirs: false,
        }
    }

    /// Whether to look last in the system directory of a distribution package.
    pub fn with_system_dirs(mut self, system_dirs: bool) -> Self {
        self.system_dirs = system_dirs;
        self
    }

    /// The directories to try for a dataset kept in `folder` under a root, with its
    /// package's `system_dir`, in order.
    pub(crate) fn candidates(&self, folder: &str, system_dir: Option<&Path>) -> Vec<PathBuf> {
        if let Some(dir) = &self.explicit {
            return vec![dir.clone()];
        }
        let system = system_dir
            .filter(|_| self.system_dirs)
            .map(Path::to_path_buf);
        self.roots
            .iter()
            .map(|root| root.join(folder))
            .chain(system)
            .collect()
    }
}
