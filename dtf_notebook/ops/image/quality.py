"""Image quality: ``tf.image.psnr``, ``ssim``, ``ssim_multiscale``, ``adjust_jpeg_quality`` and
``random_jpeg_quality``, composed from other ops as TF composes them.

PSNR and SSIM are TF's graphs: images converted to float32 with ``convert_image_dtype``, SSIM's 11x11 Gaussian
window applied by ``depthwise_conv2d`` with ``VALID`` padding, MS-SSIM's scales made by 2x2 average pooling after
symmetric padding to even sizes, and shape checks as ``Assert`` ops. So values and gradients are TF's. The JPEG
round trip encodes with a run-time quality (``EncodeJpegVariableQuality``) and decodes with Pillow's libjpeg, so its
pixels can differ from TF's by a few levels (see :mod:`.codecs`).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.fill([1, 4, 4, 1], 0.5)
    ...     print(sess.run(tf.image.psnr(a, a * 0.5, max_val=1.0)).round(3))
    [12.041]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, nn_ops, random_ops
from dtf_notebook.ops.array.array_extras import shape_n
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.control_flow.cond import cond
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.image import codecs
from dtf_notebook.ops.image.transforms import convert_image_dtype

__all__ = ["adjust_jpeg_quality", "psnr", "random_jpeg_quality", "ssim", "ssim_multiscale"]

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _verify_compatible_image_shapes(img1: Tensor, img2: Tensor) -> tuple[Tensor, Tensor, list[Any]]:
    """TF's checks: both at least rank 3 with equal last three dims, batch dims broadcasting; the run-time part as
    ``Assert`` ops."""
    shape1, shape2 = img1.shape.with_rank_at_least(3), img2.shape.with_rank_at_least(3)
    shape1[-3:].assert_is_compatible_with(shape2[-3:])
    if shape1.ndims is not None and shape2.ndims is not None:
        for dim1, dim2 in zip(reversed(shape1.dims[:-3]), reversed(shape2.dims[:-3])):
            if not (dim1 == 1 or dim2 == 1 or dim1.is_compatible_with(dim2)):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    s1, s2 = shape_n([img1, img2])
    checks = [
        Assert(math_ops.greater_equal(array_ops.size(s1), 3), [s1, s2], summarize=10),
        Assert(math_ops.reduce_all(math_ops.equal(s1[-3:], s2[-3:])), [s1, s2], summarize=10),
    ]
    return s1, s2, checks


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> Tensor:
    """Peak signal-to-noise ratio between two batches of images ``[..., h, w, c]``: one value per image,
    ``20 log10(max_val) - 10 log10(mse)``.

    Args:
        a: Images; integer images are converted to float32 in ``[0, 1]`` first, as ``max_val``.
        b: Images of ``a``'s shape.
        max_val: The dynamic range (255 for uint8, 1.0 for floats in [0, 1]).
        name: Name scope (default ``"PSNR"``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant([[[[10], [20]], [[30], [40]]]], tf.uint8)
        ...     print(sess.run(tf.image.psnr(x, x + 2, 255)).round(2))
        [42.11]
    """
    with name_scope(name, "PSNR", [a, b]):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        max_val = convert_image_dtype(math_ops.cast(max_val, a.dtype), dtypes.float32)
        a, b = convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(
            math_ops.divide(math_ops.multiply(20.0, math_ops.log(max_val)), math_ops.log(10.0)),
            math_ops.multiply(np.float32(10 / np.log(10)), math_ops.log(mse)),
            name="psnr",
        )
        _, _, checks = _verify_compatible_image_shapes(a, b)
        with control_dependencies(checks):
            return identity(value)


def _ssim_helper(x: Tensor, y: Tensor, reducer: Any, max_val: Any, compensation: float, k1: float, k2: float):
    c1 = math_ops.square(math_ops.multiply(k1, max_val))
    c2 = math_ops.square(math_ops.multiply(k2, max_val))
    mean0, mean1 = reducer(x), reducer(y)
    num0 = math_ops.multiply(math_ops.multiply(mean0, mean1), 2.0)
    den0 = math_ops.add(math_ops.square(mean0), math_ops.square(mean1))
    luminance = math_ops.divide(math_ops.add(num0, c1), math_ops.add(den0, c1))
    num1 = math_ops.multiply(reducer(math_ops.multiply(x, y)), 2.0)
    den1 = reducer(math_ops.add(math_ops.square(x), math_ops.square(y)))
    c2 = math_ops.multiply(c2, compensation)
    cs = math_ops.divide(
        math_ops.add(math_ops.subtract(num1, num0), c2), math_ops.add(math_ops.subtract(den1, den0), c2)
    )
    return luminance, cs


def _fspecial_gauss(size: Tensor, sigma: Tensor) -> Tensor:
    coords = math_ops.cast(math_ops.range(size), sigma.dtype)
    coords = math_ops.subtract(coords, math_ops.divide(math_ops.cast(math_ops.subtract(size, 1), sigma.dtype), 2.0))
    g = math_ops.square(coords)
    g = math_ops.multiply(g, math_ops.divide(-0.5, math_ops.square(sigma)))
    g = math_ops.add(array_ops.reshape(g, [1, -1]), array_ops.reshape(g, [-1, 1]))
    g = nn_ops.softmax(array_ops.reshape(g, [1, -1]))
    return array_ops.reshape(g, array_ops.stack([size, size, 1, 1]))


def _ssim_per_channel(
    img1: Tensor,
    img2: Tensor,
    max_val: Any,
    filter_size: int,
    filter_sigma: float,
    k1: float,
    k2: float,
    return_index_map: bool = False,
) -> tuple[Tensor, Tensor]:
    size = constant(filter_size, dtype=dtypes.int32)
    sigma = constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = shape_n([img1, img2])
    checks = [
        Assert(math_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], size)), [shape1, size], summarize=8),
        Assert(math_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], size)), [shape2, size], summarize=8),
    ]
    with control_dependencies(checks):
        img1 = identity(img1)
    kernel = _fspecial_gauss(size, sigma)
    kernel = array_ops.tile(kernel, array_ops.stack([1, 1, shape1[-1], 1]))

    def reducer(x: Tensor) -> Tensor:
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = nn_ops.depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    luminance, cs = _ssim_helper(img1, img2, reducer, max_val, 1.0, k1, k2)
    if return_index_map:
        return math_ops.multiply(luminance, cs), cs
    axes = constant([-3, -2], dtype=dtypes.int32)
    return math_ops.reduce_mean(math_ops.multiply(luminance, cs), axes), math_ops.reduce_mean(cs, axes)


def _prepare(img1: Any, img2: Any, max_val: Any) -> tuple[Tensor, Tensor, Any, Tensor, Tensor]:
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _verify_compatible_image_shapes(img1, img2)
    with control_dependencies(checks):
        img1 = identity(img1)
    max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
    return convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32), max_val, shape1, shape2


def ssim(
    img1: Any,
    img2: Any,
    max_val: Any,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    return_index_map: bool = False,
) -> Tensor:
    """Structural similarity of two batches of images ``[..., h, w, c]`` (TF's: an 11x11 Gaussian window,
    ``VALID`` positions, averaged over positions and channels; the map itself with ``return_index_map``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> import numpy as np
        >>> x = np.random.default_rng(0).random((1, 16, 16, 3)).astype(np.float32)
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.image.ssim(x, x, max_val=1.0)))
        [1.]
    """
    with name_scope(None, "SSIM", [img1, img2]):
        img1, img2, max_val, _, _ = _prepare(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map)
        return math_ops.reduce_mean(per_channel, [-1])


def ssim_multiscale(
    img1: Any,
    img2: Any,
    max_val: Any,
    power_factors: Any = _MSSSIM_WEIGHTS,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> Tensor:
    """Multi-scale SSIM (Wang et al., 2003) as TF computes it: one scale per power factor, each halving the image
    (2x2 average pooling, symmetric padding to even sizes), contrast-structure terms of the coarser scales and the
    SSIM of the last, each to its power, multiplied.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> import numpy as np
        >>> x = np.random.default_rng(0).random((1, 64, 64, 1)).astype(np.float32)
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.image.ssim_multiscale(x, x, 1.0, power_factors=(0.5, 0.5))).round(4))
        [1.]
    """
    with name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2, max_val, shape1, shape2 = _prepare(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant(divisor[1:], dtype=dtypes.int32)

        def do_pad(images: list[Tensor], remainder: Tensor) -> list[Tensor]:
            padding = array_ops.pad(array_ops.expand_dims(remainder, -1), [[1, 0], [1, 0]])
            return [array_ops.pad(x, padding, mode="SYMMETRIC") for x in images]

        mcs = []
        per_channel = None
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
                    remainder = math_ops.floormod(tails[0], divisor_tensor)
                    need_padding = math_ops.reduce_any(math_ops.not_equal(remainder, 0))
                    padded = cond(need_padding, lambda f=flat, r=remainder: do_pad(f, r), lambda f=flat: f)
                    downscaled = [nn_ops.avg_pool(x, ksize=divisor, strides=divisor, padding="VALID") for x in padded]
                    tails = [x[1:] for x in shape_n(downscaled)]
                    imgs = [
                        array_ops.reshape(x, array_ops.concat([h, t], 0)) for x, h, t in zip(downscaled, heads, tails)
                    ]
                per_channel, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, filter_size, filter_sigma, k1, k2)
                mcs.append(nn_ops.relu(cs))
        mcs.pop()  # the last scale contributes its SSIM, not its contrast-structure term
        stacked = array_ops.stack([*mcs, nn_ops.relu(per_channel)], axis=-1)
        ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, constant(power_factors, dtype=stacked.dtype)), [-1])
        return math_ops.reduce_mean(ms_ssim, [-1])


def adjust_jpeg_quality(image: Any, jpeg_quality: Any, dct_method: str = "", name: str | None = None) -> Tensor:
    """Encodes ``image`` ``[h, w, 1 or 3]`` as a JPEG of ``jpeg_quality`` (0-100, a Python int or an int32 tensor)
    and decodes it again, in ``image``'s dtype (floats go through uint8: values outside [0, 1] are clipped).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out = sess.run(tf.image.adjust_jpeg_quality(tf.fill([8, 8, 3], 0.5), 90))
        >>> out.shape, bool(abs(out - 0.5).max() < 0.02)
        ((8, 8, 3), True)
    """
    with name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.ndims else None
        orig_dtype = image.dtype
        image = convert_image_dtype(image, dtypes.uint8, saturate=True)
        if not isinstance(jpeg_quality, Tensor):
            jpeg_quality = convert_to_tensor(jpeg_quality, dtype=dtypes.int32)
        encoded = codecs.encode_jpeg_variable_quality(image, jpeg_quality)
        decoded = codecs.decode_jpeg(encoded, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(decoded, orig_dtype, saturate=True)


def random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: int | None = None) -> Tensor:
    """:func:`adjust_jpeg_quality` with a quality drawn uniformly from ``[min_jpeg_quality, max_jpeg_quality)``.

    Raises:
        ValueError: a bound outside [0, 100], or ``min_jpeg_quality >= max_jpeg_quality``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.image.random_jpeg_quality(tf.zeros([8, 8, 1], tf.uint8), 70, 90, seed=1)).max())
        0
    """
    if min_jpeg_quality < 0 or max_jpeg_quality < 0 or min_jpeg_quality > 100 or max_jpeg_quality > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_ops.random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=dtypes.int32)
    return adjust_jpeg_quality(image, quality)
