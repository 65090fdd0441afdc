"""PyCUDA's ``import pycuda.autoinit``: makes the current context and
device ready. lazyfuse's contexts start when first used, so importing it
only names them: ``device`` and ``context``."""

from . import driver

device = driver.Device(0)
context = device.make_context()
