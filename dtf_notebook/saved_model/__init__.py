"""SavedModel: TF1's export format for serving, ``saved_model.pb`` plus a ``variables/`` checkpoint and ``assets/``.

:mod:`.builder` writes one (``SavedModelBuilder``, ``simple_save``), :mod:`.loader` loads one into a session,
:mod:`.signatures` describes a graph's inputs and outputs (``SignatureDef``, ``TensorInfo``), :mod:`.constants`
holds TF's file names, tags and signature keys. The files are TF's: real TF's ``tf.saved_model.loader.load`` loads
what is written here (its meta graph is TF's, its variables a TF V2 checkpoint), and the reverse.
"""
