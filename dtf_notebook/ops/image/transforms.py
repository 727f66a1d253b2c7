"""TF1's ``tf.image`` functions that are compositions of ops, built as TF's ``image_ops_impl.py`` builds them.

Geometry (flips, ``rot90``, ``transpose``, crops and pads, ``central_crop``, ``random_crop``), resizing
(``resize_images`` with TF1's integer ``ResizeMethod``), photometric adjustments (brightness, contrast,
saturation, hue, gamma and their random versions), ``per_image_standardization``, ``convert_image_dtype``,
grey/RGB/YIQ/YUV conversions, ``total_variation``, ``image_gradients``, ``sobel_edges`` and ``is_jpeg``.

Reversals are strided slices (``x[:, ::-1]``) instead of TF's ``ReverseV2`` ops: the same values and
gradients. Random functions draw from this runtime's generators, so their (seeded, repeatable) choices
are not TF's.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(6), [2, 3, 1])
    ...     print(sess.run(flip_left_right(x))[:, :, 0])
    ...     print(sess.run(rot90(x))[:, :, 0])
    [[2 1 0]
     [5 4 3]]
    [[2 5]
     [1 4]
     [0 3]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import unknown_shape
from dtf_notebook.ops import array_ops, check_ops, identity_ops, math_ops, random_ops
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.control_flow.cond import case, cond
from dtf_notebook.ops.image import color, resize
from dtf_notebook.ops.op_helpers import constant_value

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "image_gradients",
    "is_jpeg",
    "pad_to_bounding_box",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "resize_image_with_crop_or_pad",
    "resize_image_with_pad",
    "resize_images",
    "rgb_to_grayscale",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sobel_edges",
    "total_variation",
    "transpose_image",
    "yiq_to_rgb",
    "yuv_to_rgb",
]


# ---- helpers ----------------------------------------------------------------------------------
def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")


def with_dependencies(dependencies: list[Any], output: Tensor, name: str | None = None) -> Tensor:
    """``output`` through an Identity that runs after ``dependencies`` (TF's ``with_dependencies``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with_dependencies([], tf.constant(1)).op.type
        'Identity'
    """
    graph = get_default_graph()
    with name_scope(name, "control_dependency", [*dependencies, output]) as scope:
        with graph.colocate_with(output), graph.control_dependencies(dependencies):
            return identity_ops.identity(output, name=scope)


def _assert(condition: Any, ex_type: type, message: str) -> list[Any]:
    """A run-time Assert for a tensor condition; for a Python one, ``ex_type(message)`` now when it is false."""
    if _is_tensor(condition):
        return [Assert(condition, [message])]
    if not condition:
        raise ex_type(message)
    return []


def _static_int(x: Any) -> int | None:
    """``x`` as an int when it is known while building (TF folds such tensors into static shapes)."""
    if not _is_tensor(x):
        return int(x)
    value = constant_value(x)
    return None if value is None or np.ndim(value) else int(value)


def _image_dims(image: Tensor, rank: int) -> list[Any]:
    """Each dimension of ``image``: an int when static, else a scalar tensor (TF's ``_ImageDimensions``)."""
    if image.shape.is_fully_defined():
        return image.shape.as_list()
    static = image.shape.with_rank(rank).as_list()
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _check_at_least_3d(image: Tensor, require_static: bool = True) -> list[Any]:
    try:
        shape = image.shape.with_rank(3) if image.shape.ndims is None else image.shape.with_rank_at_least(3)
    except ValueError:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.") from None
    if require_static and not shape.is_fully_defined():
        raise ValueError("'image' must be fully defined.")
    inner = shape[-3:]
    if any(d == 0 for d in inner.as_list() if d is not None):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    if not inner.is_fully_defined():
        return [
            check_ops.assert_positive(array_ops.shape(image)[-3:], ["inner 3 dims of 'image.shape' must be > 0."]),
            check_ops.assert_greater_equal(
                array_ops.rank(image), 3, message="'image' must be at least three-dimensional."
            ),
        ]
    return []


def _assert_at_least_3d(image: Tensor) -> Tensor:
    return with_dependencies(_check_at_least_3d(image, require_static=False), image)


def _reverse(image: Tensor, axes: list[int]) -> Tensor:
    index = tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(max(axes) + 1))
    return image[index]


def _batch(image: Tensor) -> tuple[Tensor, bool]:
    """``image`` as a 4-D batch, and whether it was one."""
    ndims = image.shape.ndims
    if ndims == 3:
        return array_ops.expand_dims(image, 0), False
    if ndims is None:
        batch = array_ops.expand_dims(image, 0)
        batch.set_shape([None] * 4)
        return batch, False
    if ndims != 4:
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image, True


def _by_rank(image: Tensor, f_rank3: Any, f_rank4: Any, what: str = "must have either 3 or 4 dimensions.") -> Tensor:
    ndims = image.shape.ndims
    if ndims is None:
        return cond(math_ops.equal(array_ops.rank(image), 3), f_rank3, f_rank4)
    if ndims == 3:
        return f_rank3()
    if ndims == 4:
        return f_rank4()
    raise ValueError(f"'image' (shape {image.shape}) {what}")


# ---- flips, rotations, transposition ----------------------------------------------------------
def _fix_flip_shape(image: Tensor, result: Tensor) -> Tensor:
    result.set_shape([None, None, None] if image.shape.ndims is None else image.shape)
    return result


def _flip(image: Any, flip_index: int, scope_name: str) -> Tensor:
    with name_scope(None, scope_name, [image]):
        image = _assert_at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(
            image,
            lambda: _fix_flip_shape(image, _reverse(image, [flip_index])),
            lambda: _reverse(image, [flip_index + 1]),
        )


def flip_left_right(image: Any) -> Tensor:
    """Mirrors an image ``[h, w, c]`` (or each image of ``[b, h, w, c]``) horizontally.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(flip_left_right([[[1], [2]]]))[:, :, 0])
        [[2 1]]
    """
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Tensor:
    """Mirrors an image (or each image of a batch) vertically.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(flip_up_down([[[1]], [[2]]]))[:, 0, 0])
        [2 1]
    """
    return _flip(image, 0, "flip_up_down")


def _random_flip(image: Any, flip_index: int, seed: int | None, scope_name: str) -> Tensor:
    with name_scope(None, scope_name, [image]) as scope:
        image = _assert_at_least_3d(convert_to_tensor(image, name="image"))

        def f_rank3() -> Tensor:
            mirror = math_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
            result = cond(mirror, lambda: _reverse(image, [flip_index]), lambda: image, name=scope)
            return _fix_flip_shape(image, result)

        def f_rank4() -> Tensor:
            batch_size = array_ops.shape(image)[0]
            uniform = random_ops.random_uniform([batch_size], 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(uniform, [batch_size, 1, 1, 1])), image.dtype)
            return flips * _reverse(image, [flip_index + 1]) + (1 - flips) * image

        return _by_rank(image, f_rank3, f_rank4)


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """Mirrors horizontally with probability 1/2 (each image of a batch on its own).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(random_flip_left_right([[[1], [2]]], seed=1)).shape)
        (1, 2, 1)
    """
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """Mirrors vertically with probability 1/2 (each image of a batch on its own).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sorted(sess.run(random_flip_up_down([[[1]], [[2]]], seed=3))[:, 0, 0].tolist()))
        [1, 2]
    """
    return _random_flip(image, 0, seed, "random_flip_up_down")


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Tensor:
    """Rotates an image (or a batch) by ``k`` quarter turns counter-clockwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(rot90([[[1], [2]], [[3], [4]]], k=2))[:, :, 0])
        [[4 3]
         [2 1]]
    """
    with name_scope(name, "rot90", [image, k]) as scope:
        image = _assert_at_least_3d(convert_to_tensor(image, name="image"))
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.mod(k, 4)

        def rotate(batch: bool) -> Tensor:
            o = 1 if batch else 0
            perm = [0, 2, 1, 3] if batch else [1, 0, 2]
            cases = [
                (math_ops.equal(k, 1), lambda: array_ops.transpose(_reverse(image, [o + 1]), perm)),
                (math_ops.equal(k, 2), lambda: _reverse(image, [o, o + 1])),
                (math_ops.equal(k, 3), lambda: _reverse(array_ops.transpose(image, perm), [o + 1])),
            ]
            result = case(cases, default=lambda: image, exclusive=True, name=scope)
            shape = result.shape if batch else image.shape
            if batch:
                result.set_shape([shape[0], None, None, shape[3]])
            else:
                result.set_shape([None, None, image.shape[2] if image.shape.ndims == 3 else None])
            return result

        return _by_rank(image, lambda: rotate(False), lambda: rotate(True))


def transpose_image(image: Any, name: str | None = None) -> Tensor:
    """Swaps the height and width axes of an image (or a batch).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(transpose_image(tf.zeros([2, 5, 3]))).shape)
        (5, 2, 3)
    """
    with name_scope(name, "transpose", [image]):
        image = _assert_at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(
            image,
            lambda: array_ops.transpose(image, [1, 0, 2], name=name),
            lambda: array_ops.transpose(image, [0, 2, 1, 3], name=name),
        )


# ---- crops and pads ---------------------------------------------------------------------------
def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any):
    """The ``target_height`` x ``target_width`` window of an image (or a batch) at the given offsets.

    Raises:
        ValueError: statically known sizes or offsets that do not fit (TF's messages).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(crop_to_bounding_box(tf.reshape(tf.range(9), [3, 3, 1]), 1, 1, 2, 1))[:, :, 0])
        [[4]
         [7]]
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = _batch(convert_to_tensor(image, name="image"))
        checks = _check_at_least_3d(image, require_static=False)
        batch, height, width, depth = _image_dims(image, rank=4)
        checks += _assert(offset_width >= 0, ValueError, "offset_width must be >= 0.")
        checks += _assert(offset_height >= 0, ValueError, "offset_height must be >= 0.")
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        checks += _assert(width >= (target_width + offset_width), ValueError, "width must be >= target + offset.")
        checks += _assert(height >= (target_height + offset_height), ValueError, "height must be >= target + offset.")
        image = with_dependencies(checks, image)
        cropped = array_ops.slice(
            image,
            array_ops.stack([0, offset_height, offset_width, 0]),
            array_ops.stack([array_ops.shape(image)[0], target_height, target_width, array_ops.shape(image)[3]]),
        )
        cropped.set_shape([_static_int(i) for i in (batch, target_height, target_width, depth)])
        return cropped if is_batch else array_ops.squeeze(cropped, axis=[0])


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any):
    """An image (or a batch) padded with zeros to ``target_height`` x ``target_width``, placed at the offsets.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 3, 2))[:, :, 0])
        [[0. 0.]
         [1. 0.]
         [0. 0.]]
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = _batch(convert_to_tensor(image, name="image"))
        batch, height, width, depth = _image_dims(image, rank=4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = _check_at_least_3d(image, require_static=False)
        checks += _assert(offset_height >= 0, ValueError, "offset_height must be >= 0")
        checks += _assert(offset_width >= 0, ValueError, "offset_width must be >= 0")
        checks += _assert(after_width >= 0, ValueError, "width must be <= target - offset")
        checks += _assert(after_height >= 0, ValueError, "height must be <= target - offset")
        image = with_dependencies(checks, image)
        paddings = array_ops.reshape(
            array_ops.stack([0, 0, offset_height, after_height, offset_width, after_width, 0, 0]), [4, 2]
        )
        padded = array_ops.pad(image, paddings)
        padded.set_shape([_static_int(i) for i in (batch, target_height, target_width, depth)])
        return padded if is_batch else array_ops.squeeze(padded, axis=[0])


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """Crops (centred) or pads (centred, with zeros) an image or a batch to ``target_height`` x ``target_width``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(resize_image_with_crop_or_pad(tf.ones([2, 4, 1]), 4, 2))[:, :, 0])
        [[0. 0.]
         [1. 1.]
         [1. 1.]
         [0. 0.]]
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch = _batch(convert_to_tensor(image, name="image"))
        checks = _check_at_least_3d(image, require_static=False)
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        image = with_dependencies(checks, image)
        if _is_tensor(target_height):
            target_height = with_dependencies(checks, target_height)
        if _is_tensor(target_width):
            target_width = with_dependencies(checks, target_width)

        def max_(x: Any, y: Any) -> Any:
            return math_ops.maximum(x, y) if _is_tensor(x) or _is_tensor(y) else max(x, y)

        def min_(x: Any, y: Any) -> Any:
            return math_ops.minimum(x, y) if _is_tensor(x) or _is_tensor(y) else min(x, y)

        _, height, width, _ = _image_dims(image, rank=4)
        width_diff = target_width - width
        height_diff = target_height - height
        cropped = crop_to_bounding_box(
            image,
            max_(-height_diff // 2, 0),
            max_(-width_diff // 2, 0),
            min_(target_height, height),
            min_(target_width, width),
        )
        resized = pad_to_bounding_box(
            cropped, max_(height_diff // 2, 0), max_(width_diff // 2, 0), target_height, target_width
        )
        return resized if is_batch else array_ops.squeeze(resized, axis=[0])


def central_crop(image: Any, central_fraction: Any) -> Tensor:
    """The central ``central_fraction`` (in (0, 1]) of the height and width of an image or a batch.

    Raises:
        ValueError: ``central_fraction`` is not in (0, 1], or the image is not 3-D or 4-D.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(central_crop(tf.reshape(tf.range(16), [4, 4, 1]), 0.5))[:, :, 0])
        [[ 5  6]
         [ 9 10]]
    """
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction = constant_value(central_fraction) if _is_tensor(central_fraction) else central_fraction
        if fraction is not None:
            fraction = float(fraction)
            if fraction <= 0.0 or fraction > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction == 1.0:
                return image
        else:
            checks = _assert(
                math_ops.logical_or(central_fraction > 0.0, central_fraction <= 1.0),
                ValueError,
                "central_fraction must be within (0, 1]",
            )
            image = with_dependencies(checks, image)
        _assert_at_least_3d(image)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
        o = rank - 3

        def dim(i: int) -> tuple[Any, bool]:
            static = image.shape[i].value
            return (static, False) if static is not None else (array_ops.shape(image)[i], True)

        (img_h, dynamic_h), (img_w, dynamic_w) = dim(o), dim(o + 1)
        dynamic_h = dynamic_h or fraction is None
        dynamic_w = dynamic_w or fraction is None

        def start(size: Any, dynamic: bool) -> Any:
            if dynamic:
                s = math_ops.cast(size, dtypes.float64)
                return math_ops.cast((s - s * math_ops.cast(central_fraction, dtypes.float64)) / 2, dtypes.int32)
            return int((float(size) - float(size) * fraction) / 2)

        h_start, w_start = start(img_h, dynamic_h), start(img_w, dynamic_w)
        h_size, w_size = img_h - h_start * 2, img_w - w_start * 2
        if rank == 3:
            begin, size = array_ops.stack([h_start, w_start, 0]), array_ops.stack([h_size, w_size, -1])
        else:
            begin, size = array_ops.stack([0, h_start, w_start, 0]), array_ops.stack([-1, h_size, w_size, -1])
        cropped = array_ops.slice(image, begin, size)
        dims = [None if dynamic_h else h_size, None if dynamic_w else w_size, image.shape[-1].value]
        cropped.set_shape(dims if rank == 3 else [image.shape[0].value, *dims])
        return cropped


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A random window of shape ``size`` out of ``value`` (TF1's ``tf.random_crop``; seeded, not TF's draws).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(random_crop(tf.zeros([5, 5, 3]), [2, 3, 3], seed=4)).shape)
        (2, 3, 3)
    """
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = Assert(
            math_ops.reduce_all(shape >= size), ["Need value.shape >= size, got ", shape, size], summarize=1000
        )
        shape = with_dependencies([check], shape)
        limit = shape - size + 1
        offset = math_ops.floormod(
            random_ops.random_uniform(array_ops.shape(shape), dtype=size.dtype, maxval=2**31 - 1, seed=seed), limit
        )
        result = array_ops.slice(value, offset, size, name=scope)
        static = constant_value(size)
        if static is not None:
            result.set_shape([int(d) for d in static])
        return result


# ---- resizing ---------------------------------------------------------------------------------
class ResizeMethod:
    """TF1's resize methods (``tf.image.ResizeMethod``); their TF2 names (``"bilinear"`` ...) work too.

    Example:
        >>> ResizeMethod.BICUBIC
        2
    """

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHODS = {
    0: resize.resize_bilinear,
    "bilinear": resize.resize_bilinear,
    1: resize.resize_nearest_neighbor,
    "nearest": resize.resize_nearest_neighbor,
    2: resize.resize_bicubic,
    "bicubic": resize.resize_bicubic,
    3: resize.resize_area,
    "area": resize.resize_area,
}


def resize_images(
    images: Any,
    size: Any,
    method: Any = ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> Tensor:
    """Resizes an image ``[h, w, c]`` or a batch to ``size`` with ``method`` (TF1's ``tf.image.resize_images``).

    An image already of that static size is returned as it is; bilinear, bicubic and area results are
    float32, nearest-neighbour ones keep the dtype.

    Raises:
        ValueError: ``images`` is not 3-D or 4-D, ``size`` is not two int32 values, or ``method`` is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(resize_images(tf.ones([4, 4, 3], tf.uint8), [2, 6], method=1)).shape)
        (2, 6, 3)
    """
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_ops.expand_dims(images, 0)
        elif images.shape.ndims != 4:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        static_new = None
        if preserve_aspect_ratio:
            _, current_h, current_w, _ = _image_dims(images, rank=4)
            static_new = _aspect_size(constant_value(size), current_h, current_w)
            f32 = dtypes.float32
            scale = math_ops.minimum(
                math_ops.cast(size[0], f32) / math_ops.cast(current_h, f32),
                math_ops.cast(size[1], f32) / math_ops.cast(current_w, f32),
            )
            new_h = math_ops.cast(math_ops.round(scale * math_ops.cast(current_h, f32)), dtypes.int32)
            new_w = math_ops.cast(math_ops.round(scale * math_ops.cast(current_w, f32)), dtypes.int32)
            size = convert_to_tensor(array_ops.stack([new_h, new_w]), dtypes.int32, name="size")
        static = constant_value(size) if static_new is None else static_new
        new_h_const, new_w_const = (int(static[0]), int(static[1])) if static is not None else (None, None)
        if None not in (new_h_const, new_w_const, height, width) and (height, width) == (new_h_const, new_w_const):
            return images if is_batch else array_ops.squeeze(images, axis=[0])
        fn = _METHODS[method]
        kwargs = {"align_corners": align_corners}
        images = fn(images, size, **kwargs)
        images.set_shape([None, new_h_const, new_w_const, None])
        return images if is_batch else array_ops.squeeze(images, axis=[0])


def _aspect_size(size: Any, height: Any, width: Any) -> list[int] | None:
    """The size ``preserve_aspect_ratio`` gives, when everything is static (TF folds it while building)."""
    if size is None or _is_tensor(height) or _is_tensor(width):
        return None
    f32 = np.float32
    scale = min(f32(size[0]) / f32(height), f32(size[1]) / f32(width))
    return [int(np.rint(scale * f32(height))), int(np.rint(scale * f32(width)))]


def resize_image_with_pad(
    image: Any, target_height: int, target_width: int, method: Any = ResizeMethod.BILINEAR, align_corners: bool = False
) -> Tensor:
    """Resizes keeping the aspect ratio, then pads with zeros (centred) to ``target_height`` x ``target_width``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(resize_image_with_pad(tf.ones([2, 4, 1]), 4, 4))[:, :, 0])
        [[0. 0. 0. 0.]
         [1. 1. 1. 1.]
         [1. 1. 1. 1.]
         [0. 0. 0. 0.]]
    """
    with name_scope(None, "resize_image_with_pad", [image]):
        image, is_batch = _batch(convert_to_tensor(image, name="image"))
        checks = _check_at_least_3d(image, require_static=False)
        checks += _assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += _assert(target_height > 0, ValueError, "target_height must be > 0.")
        image = with_dependencies(checks, image)

        def max_(x: Any, y: Any) -> Any:
            return math_ops.maximum(x, y) if _is_tensor(x) or _is_tensor(y) else max(x, y)

        _, height, width, _ = _image_dims(image, rank=4)
        f32 = dtypes.float32
        f_height = math_ops.cast(height, dtype=f32)
        f_width = math_ops.cast(width, dtype=f32)
        ratio = max_(f_width / math_ops.cast(target_width, f32), f_height / math_ops.cast(target_height, f32))
        resized_height_float = f_height / ratio
        resized_width_float = f_width / ratio
        resized_height = math_ops.cast(math_ops.floor(resized_height_float), dtype=dtypes.int32)
        resized_width = math_ops.cast(math_ops.floor(resized_width_float), dtype=dtypes.int32)
        padding_height = (math_ops.cast(target_height, f32) - resized_height_float) / 2
        padding_width = (math_ops.cast(target_width, f32) - resized_width_float) / 2
        f_padding_height = math_ops.floor(padding_height)
        f_padding_width = math_ops.floor(padding_width)
        p_height = max_(0, math_ops.cast(f_padding_height, dtype=dtypes.int32))
        p_width = max_(0, math_ops.cast(f_padding_width, dtype=dtypes.int32))
        resized = resize_images(image, array_ops.stack([resized_height, resized_width]), method, align_corners)
        padded = pad_to_bounding_box(resized, p_height, p_width, target_height, target_width)
        if padded.shape.ndims is None:
            raise ValueError("padded contains no shape.")
        return padded if is_batch else array_ops.squeeze(padded, axis=[0])


# ---- dtype conversion and photometric adjustments ---------------------------------------------
def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: str | None = None) -> Tensor:
    """Converts pixel values between dtypes with rescaling: floats span [0, 1], integers [0, MAX].

    Raises:
        AttributeError: a dtype is neither floating nor integer (TF's error).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32)))
        [0. 1.]
    """
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not image.dtype.is_floating and not image.dtype.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype is image.dtype:
        return identity_ops.identity(image, name=name)
    with name_scope(name, "convert_image", [image]) as scope:
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                cast = math_ops.saturate_cast if saturate else math_ops.cast
                return cast(scaled, dtype, name=scope)
            converted = math_ops.saturate_cast(image, dtype) if saturate else math_ops.cast(image, dtype)
            return math_ops.multiply(converted, (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1.0 / image.dtype.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)  # + 0.5 avoids rounding problems in the cast
        cast = math_ops.saturate_cast if saturate else math_ops.cast
        return cast(scaled, dtype, name=scope)


def _float_image(image: Tensor) -> Tensor:
    return image if image.dtype in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """Adds ``delta`` to the pixels (in [0, 1] units for integer images, whose results saturate).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_brightness(tf.constant([10, 250], tf.uint8), 0.1)))
        [ 35 255]
    """
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        flt = _float_image(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """``(x - mean) * contrast_factor + mean`` per channel, the mean over each image's height and width.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_contrast([[[0.2], [0.6]]], 2.0))[:, :, 0].round(4))
        [[0.  0.8]]
    """
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        adjusted = color.adjust_contrastv2(_float_image(images), contrast_factor=contrast_factor, name=scope)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``gain * image ** gamma`` (in [0, 1] units for integer images).

    Raises:
        ValueError: a Python ``gamma`` is negative.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_gamma([0.25, 1.0], gamma=0.5)))
        [0.5 1. ]
    """
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt = _float_image(image)
        checks = _assert(gamma >= 0, ValueError, "Gamma should be a non-negative real number.")
        if checks:
            gamma = with_dependencies(checks, gamma)
        adjusted = gain * flt**gamma
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """Multiplies the saturation of RGB images by ``saturation_factor`` (clipped to [0, 1]).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_saturation([[[0.2, 0.4, 0.4]]], 0.0))[0, 0])
        [0.4 0.4 0.4]
    """
    with name_scope(name, "adjust_saturation", [image]):
        image = convert_to_tensor(image, name="image")
        adjusted = color.adjust_saturation_op(_float_image(image), saturation_factor)
        return convert_image_dtype(adjusted, image.dtype)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """Rotates the hue of RGB images by ``delta`` (a fraction of the colour circle, in [-1, 1]).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_hue([[[1.0, 0.0, 0.0]]], 2.0 / 3.0))[0, 0].round(4))
        [0. 0. 1.]
    """
    with name_scope(name, "adjust_hue", [image]):
        image = convert_to_tensor(image, name="image")
        adjusted = color.adjust_hue_op(_float_image(image), delta)
        return convert_image_dtype(adjusted, image.dtype)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(abs(float(sess.run(random_brightness(0.5, 0.1, seed=2))) - 0.5) < 0.1)
        True
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(random_contrast(tf.ones([2, 2, 3]), 0.5, 1.5, seed=1)).max())
        1.0
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_ops.random_uniform([], lower, upper, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(random_saturation(tf.fill([1, 1, 3], 0.5), 0.5, 1.5, seed=1)).tolist())
        [[[0.5, 0.5, 0.5]]]
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_ops.random_uniform([], lower, upper, seed=seed))


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """:func:`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta)`` (``max_delta`` <= 0.5).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(random_hue(tf.fill([1, 1, 3], 0.5), 0.2, seed=1)).tolist())
        [[[0.5, 0.5, 0.5]]]
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_ops.random_uniform([], -max_delta, max_delta, seed=seed))


def per_image_standardization(image: Any) -> Tensor:
    """``(x - mean) / max(stddev, 1/sqrt(N))`` over the last three axes of each image (float32 result).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(per_image_standardization([[[1.0], [3.0]]]))[:, :, 0])
        [[-1.  1.]]
    """
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = _assert_at_least_3d(convert_to_tensor(image, name="image"))
        image = math_ops.cast(image, dtype=dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        image_mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        # TF's reduce_std: the square root of the mean squared deviation.
        deviation = image - image_mean
        stddev = math_ops.sqrt(math_ops.reduce_mean(math_ops.square(deviation), axis=[-1, -2, -3], keepdims=True))
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, dtypes.float32))
        adjusted_stddev = math_ops.maximum(stddev, min_stddev)
        image -= image_mean
        return math_ops.divide(image, adjusted_stddev, name=scope)


# ---- colour space conversions -----------------------------------------------------------------
def _matmul_last(images: Tensor, kernel: Any) -> Tensor:
    """``images`` ``[..., k]`` times the ``[k, n]`` matrix ``kernel`` along the last axis (TF's tensordot)."""
    kernel = convert_to_tensor(kernel, dtype=images.dtype, name="kernel")
    shape = array_ops.shape(images)
    flat = array_ops.reshape(images, [-1, kernel.shape[0].value])
    out = math_ops.matmul(flat, kernel)
    result = array_ops.reshape(out, array_ops.concat([shape[:-1], [kernel.shape[1].value]], 0))
    if images.shape.ndims is not None:
        result.set_shape(images.shape[:-1].concatenate([kernel.shape[1].value]))
    return result


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """RGB images ``[..., 3]`` to greyscale ``[..., 1]`` (ITU-R 601 luma), in the input's dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(rgb_to_grayscale(tf.constant([[255, 0, 0]], tf.uint8))))
        [[76]]
    """
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        flt = convert_image_dtype(images, dtypes.float32)
        gray = _matmul_last(flt, [[0.2989], [0.5870], [0.1140]])
        return convert_image_dtype(gray, images.dtype, name=scope)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Greyscale images ``[..., 1]`` to RGB ``[..., 3]`` (the channel repeated).

    Raises:
        ValueError: the last dimension is known and not 1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(grayscale_to_rgb([[0.5]])))
        [[0.5 0.5 0.5]]
    """
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"A grayscale image (shape {shape}) must be at least two-dimensional.")
        if shape.ndims is not None and shape[-1].value not in (None, 1):
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        rank_1 = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([array_ops.ones(rank_1, dtype=dtypes.int32), array_ops.expand_dims(3, 0)], 0)
        rgb = array_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB to YIQ (TF's matrix) along the last axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(abs(sess.run(rgb_to_yiq([1.0, 1.0, 1.0]))).round(4))
        [1. 0. 0.]
    """
    return _matmul_last(convert_to_tensor(images, name="images"), _RGB_TO_YIQ)


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ to RGB (TF's matrix) along the last axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(yiq_to_rgb([1.0, 0.0, 0.0])))
        [1. 1. 1.]
    """
    return _matmul_last(convert_to_tensor(images, name="images"), _YIQ_TO_RGB)


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB to YUV (TF's matrix) along the last axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(rgb_to_yuv([1.0, 1.0, 1.0])).round(4))
        [1. 0. 0.]
    """
    return _matmul_last(convert_to_tensor(images, name="images"), _RGB_TO_YUV)


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV to RGB (TF's matrix) along the last axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(yuv_to_rgb([1.0, 0.0, 0.0])))
        [1. 1. 1.]
    """
    return _matmul_last(convert_to_tensor(images, name="images"), _YUV_TO_RGB)


# ---- image statistics and filters -------------------------------------------------------------
def total_variation(images: Any, name: str | None = None) -> Tensor:
    """The sum of absolute differences of neighbouring pixels (per image for a batch).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(total_variation([[[0.0], [1.0]], [[1.0], [3.0]]])))
        6.0
    """
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            dif1, dif2, axis = images[1:, :, :] - images[:-1, :, :], images[:, 1:, :] - images[:, :-1, :], None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) + math_ops.reduce_sum(math_ops.abs(dif2), axis=axis)


def image_gradients(image: Any) -> tuple[Tensor, Tensor]:
    """``(dy, dx)``: forward differences of a batch ``[b, h, w, d]``, zero in the last row and column.

    Raises:
        ValueError: ``image`` is not 4-D.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     dy, dx = image_gradients(tf.reshape(tf.range(4.0), [1, 2, 2, 1]))
        ...     print(sess.run(dy)[0, :, :, 0], sess.run(dx)[0, :, :, 0])
        [[2. 2.]
         [0. 0.]] [[1. 0.]
         [1. 0.]]
    """
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    image_shape = array_ops.shape(image)
    batch_size, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch_size, 1, width, depth]), image.dtype)], 1)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch_size, height, 1, depth]), image.dtype)], 2)
    return array_ops.reshape(dy, image_shape), array_ops.reshape(dx, image_shape)


def sobel_edges(image: Any) -> Tensor:
    """The vertical and horizontal Sobel responses of a batch ``[b, h, w, d]``: ``[b, h, w, d, 2]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(sobel_edges(tf.ones([1, 3, 3, 1]))).max())
        0.0
    """
    from dtf_notebook.ops.nn_ops import depthwise_conv2d

    image = convert_to_tensor(image, name="image")
    static_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)
    filters = array_ops.tile(constant(kernels, dtype=image.dtype), [1, 1, image_shape[-1], 1], name="sobel_filters")
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = array_ops.reshape(output, array_ops.concat([image_shape, [2]], 0))
    if static_shape.ndims is not None:
        output.set_shape(static_shape.concatenate([2]))
    else:
        output.set_shape(unknown_shape())
    return output


def is_jpeg(contents: Any, name: str | None = None) -> Tensor:
    """Whether ``contents`` starts with JPEG's magic bytes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(is_jpeg(b"\\xff\\xd8\\xff\\xe0")), sess.run(is_jpeg(b"\\x89PNG")))
        True False
    """
    from dtf_notebook.ops.strings.elementwise import substr

    with name_scope(name, "is_jpeg"):
        return math_ops.equal(substr(contents, 0, 3), b"\xff\xd8\xff", name=name)
