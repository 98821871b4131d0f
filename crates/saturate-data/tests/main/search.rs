use std::path::{Path, PathBuf};

use saturate_data::{
    DataError, DataSearch, FashionMnist, Mnist, Split, DATA_DIR_VAR, FULL_VAR, LOCAL_DATA_DIR,
};

use super::support::{env_lock, write_idx_split};

const DEBIAN_DIR: &str = "/usr/share/datasets/fashion-mnist";

fn searched(result: Result<saturate_data::ImageDataset, DataError>) -> Vec<PathBuf> {
    match result {
        Err(DataError::NotFound { searched, .. }) => searched,
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn the_first_root_holding_the_files_wins() {
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_idx_split(&first.path().join("mnist"), Split::Train, &[1], false);
    write_idx_split(&second.path().join("mnist"), Split::Train, &[2, 2], true);
    let search = DataSearch::in_roots([first.path(), second.path()]);
    assert_eq!(Mnist::find(&search, Split::Train).unwrap().labels(), [1]);
    std::fs::remove_dir_all(first.path().join("mnist")).unwrap();
    assert_eq!(Mnist::find(&search, Split::Train).unwrap().labels(), [2, 2]);
}

#[test]
fn an_explicit_directory_wins_over_the_roots() {
    let (root, explicit) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_idx_split(&root.path().join("mnist"), Split::Test, &[1], false);
    write_idx_split(explicit.path(), Split::Test, &[3, 3, 3], false);
    assert_eq!(
        Mnist::from_dir(explicit.path(), Split::Test)
            .unwrap()
            .labels(),
        [3, 3, 3]
    );
    let _guard = env_lock();
    std::env::set_var(DATA_DIR_VAR, root.path());
    let from_env =
        Mnist::find(&DataSearch::from_env(), Split::Test).map(|dataset| dataset.labels().to_vec());
    let explicit_only =
        Mnist::from_dir(explicit.path(), Split::Test).map(|dataset| dataset.labels().to_vec());
    std::env::remove_var(DATA_DIR_VAR);
    assert_eq!(from_env.unwrap(), [1]);
    assert_eq!(explicit_only.unwrap(), [3, 3, 3]);
}

#[test]
fn from_env_looks_in_the_variable_then_local_data_then_the_package() {
    let root = tempfile::tempdir().unwrap();
    let local = Path::new(LOCAL_DATA_DIR);
    let _guard = env_lock();
    std::env::set_var(DATA_DIR_VAR, root.path());
    let with_variable = searched(Mnist::find(&DataSearch::from_env(), Split::Train));
    std::env::remove_var(DATA_DIR_VAR);
    let without_variable = searched(Mnist::find(&DataSearch::from_env(), Split::Train));
    assert_eq!(
        with_variable,
        [root.path().join("mnist"), local.join("mnist")]
    );
    assert_eq!(without_variable, [local.join("mnist")]);
}

#[test]
fn the_package_directory_comes_last_and_only_when_asked() {
    let root = tempfile::tempdir().unwrap();
    let without = searched(FashionMnist::find(
        &DataSearch::in_roots([root.path()]),
        Split::Test,
    ));
    assert_eq!(without, [root.path().join("fashion-mnist")]);
    let with = FashionMnist::find(
        &DataSearch::in_roots([root.path()]).with_system_dirs(true),
        Split::Test,
    );
    if Path::new(DEBIAN_DIR)
        .join("t10k-labels-idx1-ubyte.gz")
        .is_file()
    {
        assert_eq!(with.unwrap().labels().len(), 10_000);
    } else {
        assert_eq!(
            searched(with),
            [root.path().join("fashion-mnist"), PathBuf::from(DEBIAN_DIR)]
        );
    }
    // A root holding the files comes before the package.
    write_idx_split(
        &root.path().join("fashion-mnist"),
        Split::Test,
        &[4, 5],
        true,
    );
    let with = FashionMnist::find(
        &DataSearch::in_roots([root.path()]).with_system_dirs(true),
        Split::Test,
    );
    assert_eq!(with.unwrap().labels(), [4, 5]);
}

#[test]
fn load_reads_the_full_set_only_when_asked() {
    let root = tempfile::tempdir().unwrap();
    write_idx_split(
        &root.path().join("fashion-mnist"),
        Split::Train,
        &[6, 6, 6],
        false,
    );
    let _guard = env_lock();
    std::env::set_var(DATA_DIR_VAR, root.path());
    std::env::remove_var(FULL_VAR);
    let default = FashionMnist::load(Split::Train).map(|dataset| dataset.labels().len());
    std::env::set_var(FULL_VAR, "1");
    let full = FashionMnist::load(Split::Train).map(|dataset| dataset.labels().to_vec());
    std::env::remove_var(FULL_VAR);
    std::env::remove_var(DATA_DIR_VAR);
    assert_eq!(default.unwrap(), 8192);
    assert_eq!(full.unwrap(), [6, 6, 6]);
}
