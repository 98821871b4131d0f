/// The layout of one image: `channels` planes of `height` rows of `width` pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageShape {
    /// 1 for grey-scale (the MNIST family), 3 for RGB (CIFAR-10).
    pub channels: usize,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
}

impl ImageShape {
    /// The number of bytes one image takes: `channels * height * width`.
    pub fn pixel_count(&self) -> usize {
        self.channels * self.height * self.width
    }
}

/// One labelled image, as a [`Dataset`](burn::data::dataset::Dataset) of this crate yields it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageItem {
    /// Raw pixel bytes in `[channel, row, column]` order (channel planes, each row-major).
    pub pixels: Vec<u8>,
    /// The class index.
    pub label: u8,
    /// The layout of `pixels`.
    pub shape: ImageShape,
}
