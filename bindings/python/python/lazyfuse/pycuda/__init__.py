"""PyCUDA's interface over lazyfuse, so PyCUDA programs run with changed
imports — on a GPU and, through lazyfuse's translation of their CUDA C,
on the CPU and the simulator::

    import lazyfuse.pycuda.autoinit
    import lazyfuse.pycuda.driver as drv
    from lazyfuse.pycuda.compiler import SourceModule

``SourceModule(source).get_function(name)`` launches with ``block=`` and
``grid=``; ``drv.In``/``drv.Out``/``drv.InOut`` wrap NumPy arrays (copied
in, and back where written); ``drv.mem_alloc`` with ``memcpy_htod`` and
``memcpy_dtoh`` hold memory as lazyfuse arrays; ``gpuarray.to_gpu`` makes
a lazyfuse array. Errors are Python exceptions."""
