"""The kernel store from Python: the one on-disk store of compiled code that
spconv-run, the Python front end and the PyTorch ops share
(`spconv-rt/KernelStore.h`, docs/Compiler.md "The kernel store"). Calls
libspconv_store through ctypes, so every tool reads and writes the store
with one implementation.

Where it is: $SPCONV_MLIR_CACHE_DIR ("off" for none), else
$XDG_CACHE_HOME/spconv-mlir, else ~/.cache/spconv-mlir; its size limit is
$SPCONV_MLIR_CACHE_SIZE (default 2G), kept by evicting the least recently
used entries.
"""
import ctypes
import os
import threading

from .errors import ToolchainError

STORE_LIBRARY = "libspconv_store.so.1"
STORE_OK, STORE_MISS, STORE_ERROR = 0, 1, -1
_PATH_SIZE = 4096

_VISIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class _Entry(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("bytes", ctypes.c_uint64),
                ("last_used", ctypes.c_int64)]


_libraries = {}
_lock = threading.Lock()


def _library(libdir):
    with _lock:
        lib = _libraries.get(libdir)
        if lib is not None:
            return lib
        path = os.path.join(libdir, STORE_LIBRARY)
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise ToolchainError("cannot load the kernel store library %s: %s; rebuild "
                                 "spconv-mlir (scripts/build.sh)" % (path, e)) from None
        c_char_p, c_size_t, c_int = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
        u64p = ctypes.POINTER(ctypes.c_uint64)
        for name, args in [
                ("spconv_store_default_root", [c_char_p, c_size_t]),
                ("spconv_store_size_limit", [u64p]),
                ("spconv_store_lookup", [c_char_p, c_char_p, c_char_p, c_size_t]),
                ("spconv_store_begin", [c_char_p, c_char_p, c_size_t]),
                ("spconv_store_publish", [c_char_p, c_char_p, c_char_p, ctypes.c_uint64,
                                          c_char_p, c_size_t]),
                ("spconv_store_abandon", [c_char_p]),
                ("spconv_store_remove", [c_char_p, c_char_p]),
                ("spconv_store_list", [c_char_p, _VISIT, ctypes.c_void_p])]:
            function = getattr(lib, name)
            function.argtypes, function.restype = args, c_int
        lib.spconv_store_last_error.argtypes, lib.spconv_store_last_error.restype = [], c_char_p
        _libraries[libdir] = lib
        return lib


class KernelStore:
    """The store at `root` (default: the environment's), through the
    libspconv_store in `libdir`. `enabled` is false when the store is off."""

    def __init__(self, libdir, root=None):
        self._lib = _library(libdir)
        if root is None:
            buffer = ctypes.create_string_buffer(_PATH_SIZE)
            self._check(self._lib.spconv_store_default_root(buffer, _PATH_SIZE))
            root = buffer.value.decode()
        self.root = root
        self._root = os.fsencode(root)

    @property
    def enabled(self):
        return bool(self.root)

    def _check(self, status):
        if status == STORE_ERROR:
            raise ToolchainError("kernel store: %s"
                                 % self._lib.spconv_store_last_error().decode())
        return status

    def _path_call(self, function, *args):
        buffer = ctypes.create_string_buffer(_PATH_SIZE)
        status = self._check(function(*args, buffer, _PATH_SIZE))
        return os.fsdecode(buffer.value) if status == STORE_OK else None

    def lookup(self, key):
        """The directory of the entry `key`, marked used; None on a miss."""
        return self._path_call(self._lib.spconv_store_lookup, self._root, key.encode())

    def begin(self):
        """A fresh staging directory for a new entry's files."""
        return self._path_call(self._lib.spconv_store_begin, self._root)

    def size_limit(self):
        """$SPCONV_MLIR_CACHE_SIZE in bytes, or the default (2 GiB)."""
        limit = ctypes.c_uint64()
        self._check(self._lib.spconv_store_size_limit(ctypes.byref(limit)))
        return limit.value

    def publish(self, key, staging, size_limit):
        """Publishes `staging` as `key`, then evicts down to `size_limit`
        bytes; the entry's directory (another process's, if it published
        `key` first)."""
        return self._path_call(self._lib.spconv_store_publish, self._root, key.encode(),
                               os.fsencode(staging), size_limit)

    def abandon(self, staging):
        self._check(self._lib.spconv_store_abandon(os.fsencode(staging)))

    def remove(self, key):
        """Removes `key`; false if there was no such entry."""
        return self._check(self._lib.spconv_store_remove(self._root, key.encode())) == STORE_OK

    def entries(self):
        """[(key, bytes, last use in seconds)], least recently used first."""
        found = []

        def visit(entry, _):
            view = _Entry.from_address(entry)
            found.append((view.key.decode(), view.bytes, view.last_used))
            return 0

        self._check(self._lib.spconv_store_list(self._root, _VISIT(visit), None))
        return found
