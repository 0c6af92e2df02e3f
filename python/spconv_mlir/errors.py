"""The errors the package raises.

Every error names what it is about (a layer by its name in the model, an
argument by its name) and says what to do. They derive from the built-in
exception a Python user would expect (ValueError for wrong input, ...), so
`except ValueError` keeps working.
"""


class SpconvMlirError(Exception):
    """Base class of every error raised by spconv_mlir."""


class ModelError(SpconvMlirError, ValueError):
    """The model cannot be compiled as written: a wrong argument of a layer,
    channels that do not match, a module the compiler does not know."""


class UnsupportedError(ModelError, NotImplementedError):
    """A module, argument or operation that spconv_mlir does not support
    (yet); the message says what to use instead."""


class WeightError(SpconvMlirError, ValueError):
    """A checkpoint that does not fit the model: missing or unexpected keys,
    shapes that do not match the layer in the given layout."""


class InputError(SpconvMlirError, ValueError):
    """Inputs of a compiled network that do not fit it: shapes, dtypes,
    coordinates outside the grid, duplicate sites."""


class ToolchainError(SpconvMlirError, RuntimeError):
    """spconv-compile, the runtime library or the C compiler could not be
    found or failed."""


class OutOfMemoryError(SpconvMlirError, MemoryError):
    """A compiled network ran out of memory: the message names what was
    being allocated, how many bytes, and for which layer (its source line).
    Nothing of the failed call is returned; the next call may succeed."""
