"""TF's SavedModel constants: file and directory names, collection keys, tags and signature keys and methods.

Example:
    >>> SAVED_MODEL_FILENAME_PB, VARIABLES_DIRECTORY, SERVING, DEFAULT_SERVING_SIGNATURE_DEF_KEY
    ('saved_model.pb', 'variables', 'serve', 'serving_default')
"""

# ---- files and collections (TF's tensorflow/python/saved_model/constants.py) -----------------------
SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
ASSETS_KEY = "saved_model_assets"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
TRAIN_OP_KEY = "saved_model_train_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"

# ---- tags (tag_constants) ------------------------------------------------------------------------------------
SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# ---- signatures (signature_constants) --------------------------------------------------------------------------
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_INPUTS = "inputs"
PREDICT_OUTPUTS = "outputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_INPUTS = "inputs"
REGRESS_OUTPUTS = "outputs"
SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"
