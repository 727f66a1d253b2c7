"""``tf.image``: TF1's image functions (resizing, crops and pads, flips, colour adjustments, codecs).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.image.resize_images(tf.ones([4, 4, 3]), [2, 2])).shape)
    (2, 2, 3)
"""

from dtf_notebook.ops.image.codecs import (
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
)
from dtf_notebook.ops.image.color import hsv_to_rgb, rgb_to_hsv
from dtf_notebook.ops.image.resize import resize_area, resize_bicubic, resize_bilinear, resize_nearest_neighbor
from dtf_notebook.ops.image.transforms import (
    ResizeMethod,
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    grayscale_to_rgb,
    image_gradients,
    is_jpeg,
    pad_to_bounding_box,
    per_image_standardization,
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    random_hue,
    random_saturation,
    resize_image_with_crop_or_pad,
    resize_image_with_pad,
    resize_images,
    rgb_to_grayscale,
    rgb_to_yiq,
    rgb_to_yuv,
    rot90,
    sobel_edges,
    total_variation,
    transpose_image,
    yiq_to_rgb,
    yuv_to_rgb,
)

#: TF1's other names of the same functions.
resize = resize_images
resize_with_crop_or_pad = resize_image_with_crop_or_pad
transpose = transpose_image

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
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
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
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_image_with_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sobel_edges",
    "total_variation",
    "transpose",
    "transpose_image",
    "yiq_to_rgb",
    "yuv_to_rgb",
]
