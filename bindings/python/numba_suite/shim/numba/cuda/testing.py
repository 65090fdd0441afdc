"""``numba.cuda.testing``: the test base class and skip markers of Numba's
suite, as they behave under Numba's simulator (``config.ENABLE_CUDASIM``).
Test infrastructure only."""

import os
import unittest
from pathlib import Path

import numpy as np

from . import config
from .tests.support import TestCase, override_config  # noqa: F401

test_data_dir = Path(__file__).parent / "tests" / "data"


class CUDATestCase(TestCase):
    """For tests that use a CUDA device (a lazyfuse context here)."""

    FLOAT16_RTOL = np.finfo(np.float16).eps

    def setUp(self):
        self._low_occupancy_warnings = config.CUDA_LOW_OCCUPANCY_WARNINGS
        self._warn_on_implicit_copy = config.CUDA_WARN_ON_IMPLICIT_COPY
        config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        config.CUDA_WARN_ON_IMPLICIT_COPY = 0

    def tearDown(self):
        config.CUDA_LOW_OCCUPANCY_WARNINGS = self._low_occupancy_warnings
        config.CUDA_WARN_ON_IMPLICIT_COPY = self._warn_on_implicit_copy

    def _no_asm(self, *args, **kwargs):
        self.skipTest("inspects Numba's PTX or LLVM IR")

    assertFileCheckAsm = assertFileCheckLLVM = assertFileCheckMatches = _no_asm


def skip_on_cudasim(reason):
    assert isinstance(reason, str)
    return unittest.skipIf(config.ENABLE_CUDASIM, reason)


def skip_unless_cudasim(reason):
    assert isinstance(reason, str)
    return unittest.skipUnless(config.ENABLE_CUDASIM, reason)


skip_on_standalone_numba_cuda = unittest.skipUnless(False, "requires base numba install")


def _skip_if(condition):
    def marker(reason):
        assert isinstance(reason, str)
        return unittest.skipIf(condition, reason)
    return marker


skip_if_external_memmgr = _skip_if(config.CUDA_MEMORY_MANAGER != "default")
skip_under_cuda_memcheck = _skip_if(os.environ.get("CUDA_MEMCHECK") is not None)
# No CUDA toolkit binaries, headers or link-time libraries are used.
skip_unless_conda_cudatoolkit = skip_without_nvdisasm = _skip_if(True)
skip_if_nvjitlink_missing = _skip_if(True)
skip_with_nvdisasm = skip_on_arm = skip_on_wsl2 = skip_on_nvjitlink_13_1_sm_120 = _skip_if(False)


def skip_if_cuda_includes_missing(fn):
    return unittest.skip("CUDA include dir not available")(fn)


skip_if_curand_kernel_missing = skip_if_cuda_includes_missing


def cc_X_or_above(major, minor):
    return True


skip_unless_cc_50 = skip_unless_cc_53 = skip_unless_cc_60 = skip_unless_cc_75 = skip_unless_cc_90 = (
    lambda fn: fn
)


def xfail_unless_cudasim(fn):
    return fn


def cudadevrt_missing():
    return False


def skip_if_cudadevrt_missing(fn):
    return fn


class ForeignArray:
    """An array from another library through the CUDA array interface."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__
