"""The reader: a model of its own reads each document apart from the model being diagnosed.

- :mod:`diagnose.reader.weights`: the pinned reference weights, assembled from the package index;
- :mod:`diagnose.reader.prompt`: what is asked of each document and how the reply is read;
- :mod:`diagnose.reader.llama`: the in-process engine (llama.cpp);
- :mod:`diagnose.reader.structured`: the reader the input stage calls (in-process or a server);
- :mod:`diagnose.reader.choose`: which reader reads (``--reader``, a case's ``reader:``, the setting).
"""
