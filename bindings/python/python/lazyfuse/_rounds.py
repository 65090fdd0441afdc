"""Reductions by rounds of pairs, for combinations lazyfuse has no
reduction of its own for (a CUDA C ``reduce_expr``, complex products, a
complex arg-reduction): the even and odd elements along the last axis
combined, then pairs of those, ``log2 n`` rounds in all, each a lazy
element-wise step (the rounds fuse where the combination does).

Imports nothing from the package: the modules that use it pass what it
needs."""


def pairwise(parts, combine, concatenate):
    """``parts`` (arrays with one last axis, carried together: values and
    their indices, say) reduced along that axis: ``combine(evens, odds)``
    gives the combined parts of each pair, an odd element out is carried to
    the next round by ``concatenate(arrays)`` (joining along the last axis).
    Returns the parts' single remaining elements (the last axis gone)."""
    parts = tuple(parts)
    n = parts[0].shape[-1]
    while n > 1:
        half = n // 2
        evens = tuple(p[..., 0:2 * half:2] for p in parts)
        odds = tuple(p[..., 1:2 * half:2] for p in parts)
        combined = tuple(combine(evens, odds))
        if n % 2:
            combined = tuple(concatenate([c, p[..., n - 1:]]) for c, p in zip(combined, parts))
        parts, n = combined, combined[0].shape[-1]
    return tuple(p[..., 0] for p in parts)
