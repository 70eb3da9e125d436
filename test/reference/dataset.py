"""Loads image/label sets (idx or .npy) and turns u8 images into model inputs as the .mdl examples do.

The examples feed `reshape(f32(batch.image) / 255.0, [B, 784])` to the MLP and
`[B, 1, 28, 28]` to LeNet: the division happens in float32, so the float64
reference starts from the same float32 inputs, widened.
"""
import numpy as np

import idx_np

FASHION = "/usr/share/datasets/fashion-mnist"


def load_array(path):
    """An array from a .npy file (no pickles) or an idx file (.gz or not)."""
    if str(path).endswith(".npy"):
        return np.load(path, allow_pickle=False)
    return idx_np.read_idx(path)


def load_split(images_path, labels_path):
    """(u8 images [N, ...], int64 labels [N]) with matching sample counts."""
    images, labels = load_array(images_path), load_array(labels_path)
    if images.dtype != np.uint8:
        raise ValueError(f"{images_path}: images must be u8 as the .mdl data fields are, got {images.dtype}")
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"{labels_path}: labels must be a 1-D integer array, "
                         f"got {labels.dtype}{list(labels.shape)}")
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    return images, labels.astype(np.int64)


def model_input(images, net, dtype):
    """f32(image)/255 reshaped to [N, C, H, W] for a net with convs ([N, H, W] gains C = 1),
    or to [N, pixels] for an MLP; then cast to dtype."""
    x = images.astype(np.float32) / np.float32(255.0)
    if not net.convs:
        x = x.reshape(len(x), -1)
    elif x.ndim == 3:
        x = x[:, None]
    elif x.ndim != 4:
        raise ValueError(f"a CNN needs images [N, H, W] or [N, C, H, W], got {list(images.shape)}")
    return x.astype(dtype)
