"""Cooperative groups in kernels (Numba's ``cuda.cg``): ``g =
cuda.cg.this_grid()`` and ``g.sync()``, a barrier of every thread of the
grid. A mixin of the translator (``_jit.Translator``).

lazyfuse's kernel builder has a barrier of a block (``syncthreads``) and
none of a grid, and blocks of a launch may run one after another (the CPU
runs them on its threads as it likes), so a grid-wide barrier exists only
where the grid is one block: there the block's barrier *is* the grid's.
A kernel that takes a grid group is therefore cooperative as CUDA's are:
at most ``max_cooperative_grid_blocks`` (1) blocks may be launched, and the
launch refuses more (as CUDA refuses a cooperative launch too large).
"""

import ast

#: The blocks of a cooperative launch lazyfuse can synchronise: one (see
#: the module's docstring).
MAX_COOPERATIVE_BLOCKS = 1


class _GridGroups(ast.NodeTransformer):
    """Drops ``g = cuda.cg.this_grid()`` (noting ``g``) and bare
    ``cuda.cg.this_grid()`` statements, and turns ``g.sync()`` and
    ``cuda.cg.this_grid().sync()`` into a call of ``_lf_grid_sync``."""

    def __init__(self, is_this_grid):
        self.is_this_grid = is_this_grid
        self.names = set()
        self.found = False

    def grid_call(self, node):
        if isinstance(node, ast.Call) and not node.args and not node.keywords \
                and self.is_this_grid(node.func):
            self.found = True
            return True
        return False

    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and self.grid_call(node.value)):
            self.names.add(node.targets[0].id)
            return None
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if self.grid_call(node.value):
            return None
        return self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "sync" and not node.args
                and ((isinstance(func.value, ast.Name) and func.value.id in self.names)
                     or self.grid_call(func.value))):
            self.found = True
            return ast.copy_location(ast.Call(ast.Name("_lf_grid_sync", ast.Load()), [], []), node)
        return self.generic_visit(node)


class GridGroups:
    """The translator's grid groups. Expects ``env``, ``fail``,
    ``resolved_path`` and ``cooperative`` (a list shared with the device
    functions inlined: whether the kernel takes a grid group)."""

    def rewrite_grid_groups(self, tree):
        """``tree`` with its grid groups' barriers as ``_lf_grid_sync()``
        calls (translated as the block's barrier); a grid group used
        otherwise is refused."""
        if not any(isinstance(n, ast.Attribute) and n.attr == "this_grid" or
                   isinstance(n, ast.Name) and n.id == "this_grid" for n in ast.walk(tree)):
            return tree
        from ._compile_time import _Intrinsic
        self.env["_lf_grid_sync"] = _Intrinsic("cuda.cg.grid_sync")
        rewrite = _GridGroups(lambda func: self.resolved_path(func) == "cuda.cg.this_grid")
        tree = rewrite.visit(tree)
        if rewrite.found:
            self.cooperative[0] = True
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in rewrite.names and isinstance(node.ctx, ast.Load):
                self.fail(node, f"the grid group '{node.id}' used other than by '{node.id}.sync()'")
            if isinstance(node, ast.Call) and rewrite.grid_call(node):
                self.fail(node, "a grid group used other than by its sync()")
        return tree

    def grid_sync(self):
        """``g.sync()``: the block's barrier, which is the grid's (the launch
        has one block: see the module's docstring)."""
        return ("sync",)


def refuse_large_grid(name, grid):
    """Refuses a launch of a cooperative kernel over more blocks than lazyfuse
    can synchronise (CUDA refuses a cooperative launch too large too)."""
    from .errors import ArgumentError
    blocks = 1
    for d in (grid if isinstance(grid, (tuple, list)) else [grid]):
        blocks *= int(d)
    if blocks > MAX_COOPERATIVE_BLOCKS:
        raise ArgumentError(
            f"kernel '{name}' synchronises its grid (cuda.cg.this_grid()) and is launched over "
            f"{blocks} blocks: lazyfuse's kernels have a barrier of a block only, so a grid can "
            f"be synchronised when it is one block (max_cooperative_grid_blocks() is "
            f"{MAX_COOPERATIVE_BLOCKS}); launch it as kernel[1, threads]")


class Overload:
    """Numba's compiled kernel for one signature (``kernel.overloads[sig]``):
    what lazyfuse can say of it before a launch."""

    def __init__(self, dispatcher, signature):
        self._dispatcher, self.signature = dispatcher, signature

    def max_cooperative_grid_blocks(self, blockdim):
        """The most blocks a cooperative launch of ``blockdim`` threads may
        have: 1 on every backend (see ``_grid_groups``), whatever the block."""
        return MAX_COOPERATIVE_BLOCKS
