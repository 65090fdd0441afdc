"""NumPy's contractions: ``einsum``, ``tensordot`` and ``inner``, lazily,
over lazyfuse's own operations.

Every operand's axes carry a label. One operand's repeated label is its
diagonal (a view); a label no other operand and not the result carries
is summed away at once; then the operands are taken two at a time, left
to right. Two operands sharing labels the rest no longer need are one
matrix product (``lazyfuse::matmul``: GEMM on the CPU, a tiled kernel on
devices), their shared kept labels its batch axes, where each has labels
of its own too; else they are a broadcast product, summed (fused with
the work around it).
The result's remaining extra labels are summed and its axes put in the
order asked for. Results are NumPy's up to the rounding of the sums'
order."""

import operator

import numpy as np

from ._array import Array, COMPLEX, _store
from ._creation import _lazy
from ._joins import broadcast_to
from ._registry import OPERATIONS, register
from .errors import ArgumentError, ShapeError

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """NumPy's ``einsum``: ``einsum("ij,jk->ik", a, b)``, implicit output
    (``"ij,jk"``), ``...``, repeated labels (``"ii->i"``, ``"ii"``), any
    number of operands, and the interleaved form ``einsum(a, [0, 1], b,
    [1, 2], [0, 2])``. ``optimize`` is accepted (the operands are combined
    left to right); ``dtype=`` casts the operands first."""
    if order not in ("K", "A", "C", "F"):
        raise ArgumentError(f"einsum: order {order!r} (expected 'K', 'A', 'C' or 'F')")
    subscripts, arrays = _spec(operands)
    arrays = _lazy(arrays)
    arrays = [a if isinstance(a, Array) else _lazy([np.asarray(a)])[0] for a in arrays]
    if dtype is not None:
        dtype = np.dtype(dtype)
        for a in arrays:
            if not np.can_cast(a.dtype, dtype, casting):
                raise TypeError(f"einsum: cannot cast an operand from {a.dtype} to {dtype} "
                                f"according to the rule {casting!r}")
        arrays = [a.astype(dtype) for a in arrays]
    inputs, output = _parsed(subscripts, [a.ndim for a in arrays])
    result = contract(arrays, inputs, output)
    return result if out is None else _store(result, out, "einsum", casting)


def tensordot(a, b, axes=2):
    """NumPy's ``tensordot``: the sum of products over ``a``'s last
    ``axes`` axes and ``b``'s first (an int), or over the axes two
    sequences name."""
    a, b = _lazy([a, b])
    a, b = (x if isinstance(x, Array) else _lazy([np.asarray(x)])[0] for x in (a, b))
    try:
        n = operator.index(axes)
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: {n} axes to sum over, for operands of shapes "
                             f"{a.shape} and {b.shape}")
    except TypeError:
        axes_a, axes_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    if len(axes_a) != len(axes_b):
        raise ShapeError(f"tensordot: {len(axes_a)} axes of the first operand against "
                         f"{len(axes_b)} of the second")
    axes_a = [_axis("tensordot", a, x) for x in axes_a]
    axes_b = [_axis("tensordot", b, x) for x in axes_b]
    for x, y in zip(axes_a, axes_b):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(f"tensordot: shape mismatch for sum: axis {x} of shape {a.shape} "
                             f"against axis {y} of shape {b.shape}")
    labels = iter(_LETTERS)
    la = [next(labels) for _ in range(a.ndim)]
    lb = [next(labels) for _ in range(b.ndim)]
    for x, y in zip(axes_a, axes_b):
        lb[y] = la[x]
    output = [la[i] for i in range(a.ndim) if i not in axes_a] + [
        lb[i] for i in range(b.ndim) if i not in axes_b]
    return contract([a, b], [la, lb], output)


def inner(a, b):
    """NumPy's ``inner``: the sum of products over the last axes (a
    product for a 0-d operand)."""
    a, b = _lazy([a, b])
    if not isinstance(a, Array) or not isinstance(b, Array) or a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: shapes {a.shape} and {b.shape} (expected the same last axis)")
    return tensordot(a, b, ([-1], [-1]))


def vecdot(x1, x2, axis=-1):
    """NumPy's ``vecdot`` (gufunc ``(n),(n)->()``): the sum of products
    along ``axis``, the other axes broadcast; in NumPy's result dtype (an
    int8 sum stays int8, two bools give the ``any`` of their ``and``)."""
    x1, x2 = _operands("vecdot", x1, x2)
    if any(np.dtype(x.dtype).kind == "c" for x in (x1, x2)):
        x1 = np.conj(x1)  # the array API's (and NumPy's) vecdot conjugates the first
    for k, x in enumerate((x1, x2)):
        if x.ndim == 0:
            raise ShapeError(f"vecdot: input operand {k} does not have enough dimensions "
                             "(has 0, gufunc signature (n),(n)->() requires 1)")
    # The core axes go last; the others broadcast as loop axes.
    x1, x2 = (np.moveaxis(x, _axis("vecdot", x, axis), -1) for x in (x1, x2))
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"vecdot: input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (n),(n)->() (size {x2.shape[-1]} is different from "
                         f"{x1.shape[-1]})")
    if x1.dtype == np.bool_ and x2.dtype == np.bool_:
        return (x1 & x2).any(axis=-1)
    products = x1 * x2
    return products.sum(axis=-1, dtype=products.dtype)


def matvec(x1, x2):
    """NumPy's ``matvec`` (gufunc ``(m,n),(n)->(m)``): ``x1 @ x2`` of
    stacks of matrices and vectors, one matrix product."""
    x1, x2 = _operands("matvec", x1, x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ShapeError(f"matvec: operands of shapes {x1.shape} and {x2.shape} (expected a "
                         "stack of matrices and a stack of vectors, signature (m,n),(n)->(m))")
    return (x1 @ x2[..., None])[..., 0]


def vecmat(x1, x2):
    """NumPy's ``vecmat`` (gufunc ``(n),(n,m)->(m)``): vectors times
    matrices, one matrix product (a complex vector conjugated, as NumPy's)."""
    x1, x2 = _operands("vecmat", x1, x2)
    if np.dtype(x1.dtype).kind == "c":
        x1 = np.conj(x1)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ShapeError(f"vecmat: operands of shapes {x1.shape} and {x2.shape} (expected a "
                         "stack of vectors and a stack of matrices, signature (n),(n,m)->(m))")
    return (x1[..., None, :] @ x2)[..., 0, :]


def _operands(name, x1, x2):
    """Both operands as lazy arrays in one context (numbers too: a
    gufunc's operands are arrays)."""
    arrays = (Array,) + COMPLEX.types
    return _lazy([x if isinstance(x, arrays) else np.asarray(x) for x in (x1, x2)])


def _axis(name, a, x):
    x = operator.index(x)
    if not -a.ndim <= x < a.ndim:
        raise ArgumentError(f"{name}: axis {x} is out of bounds for an array of dimension {a.ndim}")
    return x % a.ndim


# --- the subscripts -------------------------------------------------------------

def _spec(operands):
    """``(subscripts, arrays)`` from either calling form."""
    if not operands:
        raise ArgumentError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    # einsum(a, [0, 1], b, [1, 2], [0, 2]): labels as ints, `...` as Ellipsis.
    arrays, terms = list(operands[0::2]), list(operands[1::2])
    output = None
    if len(arrays) > len(terms):
        arrays, output = arrays[:-1], arrays[-1]
    spell = lambda term: "".join("..." if k is Ellipsis else _letter(k) for k in term)
    subscripts = ",".join(spell(t) for t in terms)
    return subscripts + ("" if output is None else "->" + spell(output)), arrays


def _letter(k):
    k = operator.index(k)
    if not 0 <= k < len(_LETTERS):
        raise ArgumentError(f"einsum: subscript {k} (expected 0 to {len(_LETTERS) - 1})")
    return _LETTERS[k]


def _parsed(subscripts, ndims):
    """Each operand's labels and the result's, ``...`` spelled out as
    labels of its own (``"...0"``: the last axis it covers, counted from
    the right, so that operands broadcast as NumPy's)."""
    subscripts = subscripts.replace(" ", "")
    explicit = "->" in subscripts
    left, _, right = subscripts.partition("->")
    terms = left.split(",")
    if len(terms) != len(ndims):
        raise ArgumentError(f"einsum: {len(terms)} operands in the subscripts {subscripts!r}, "
                            f"{len(ndims)} given")
    inputs, broadcast = [], 0
    for n, (term, ndim) in enumerate(zip(terms, ndims)):
        letters = _letters(term, subscripts)
        if "..." in letters:
            covered = ndim - (len(letters) - 1)
            if covered < 0:
                raise ShapeError(f"einsum: operand {n} has {ndim} axes, fewer than the "
                                 f"subscripts {term!r} name")
            at = letters.index("...")
            letters[at:at + 1] = [f"...{i}" for i in range(covered - 1, -1, -1)]
            broadcast = max(broadcast, covered)
        elif len(letters) != ndim:
            raise ShapeError(f"einsum: operand {n} has {ndim} axes, and the subscripts {term!r} "
                             f"name {len(letters)}")
        inputs.append(letters)
    dots = [f"...{i}" for i in range(broadcast - 1, -1, -1)]
    if not explicit:
        counts = {}
        for letters in inputs:
            for label in letters:
                counts[label] = counts.get(label, 0) + 1
        once = sorted(label for label, c in counts.items() if c == 1 and len(label) == 1)
        return inputs, dots + once
    output = _letters(right, subscripts)
    if "..." in output:
        at = output.index("...")
        output[at:at + 1] = dots
    elif dots:
        raise ShapeError(f"einsum: the output subscripts of {subscripts!r} have no '...' for "
                         f"the operands' broadcast axes")
    seen = {label for letters in inputs for label in letters}
    for label in output:
        if output.count(label) > 1:
            raise ArgumentError(f"einsum: output subscript {label!r} appears more than once")
        if label not in seen:
            raise ArgumentError(f"einsum: output subscript {label!r} never appeared in an input")
    return inputs, output


def _letters(term, subscripts):
    """A term's labels: letters, and ``...`` once."""
    labels, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            if "..." in labels:
                raise ArgumentError(f"einsum: more than one '...' in a term of {subscripts!r}")
            labels.append("...")
            i += 3
        elif term[i] in _LETTERS:
            labels.append(term[i])
            i += 1
        else:
            raise ArgumentError(f"einsum: invalid subscript {term[i]!r} in {subscripts!r} "
                                "(expected letters, ',', '->' and '...')")
    return labels


# --- the contraction ------------------------------------------------------------

def contract(arrays, inputs, output):
    """The operands, their axes labelled by ``inputs``, multiplied where
    labels meet and summed over the labels ``output`` lacks, in
    ``output``'s order."""
    sizes = _sizes(arrays, inputs)
    terms = [_distinct(a, labels) for a, labels in zip(arrays, inputs)]
    for n in range(len(terms)):
        later = {label for _, labels in terms[n + 1:] for label in labels} | set(output)
        earlier = {label for _, labels in terms[:n] for label in labels}
        terms[n] = _summed(*terms[n], keep=later | earlier)
    value, labels = terms[0]
    for n in range(1, len(terms)):
        keep = {label for _, ls in terms[n + 1:] for label in ls} | set(output)
        value, labels = _pair((value, labels), terms[n], keep, sizes)
    value, labels = _summed(value, labels, keep=set(output))
    if labels != output:
        value = value.transpose([labels.index(label) for label in output])
    return value


def _sizes(arrays, inputs):
    """Each label's length: the same in every operand, or 1 (broadcast)."""
    sizes = {}
    for n, (a, labels) in enumerate(zip(arrays, inputs)):
        own = {}
        for label, size in zip(labels, a.shape):
            if own.setdefault(label, size) != size:
                raise ShapeError(f"einsum: dimensions in operand {n} for collapsing index "
                                 f"{label!r} don't match ({own[label]} != {size})")
        for label, size in zip(labels, a.shape):
            known = sizes.get(label, 1)
            if size != known and 1 not in (size, known):
                name = "..." if label.startswith("...") else repr(label)
                raise ShapeError(f"einsum: operands could not be broadcast together: subscript "
                                 f"{name} has length {known} and, in operand {n}, {size}")
            sizes[label] = max(size, known) if label in sizes else size
    return sizes


def _distinct(value, labels):
    """``value`` with each repeated label's axes replaced by their diagonal
    (the label on the last axis)."""
    from ._diagonals import diagonal
    labels = list(labels)
    while len(set(labels)) != len(labels):
        label = next(label for label in labels if labels.count(label) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        value = diagonal(value, 0, first, second)
        labels = [x for i, x in enumerate(labels) if i not in (first, second)] + [label]
    return value, labels


def _summed(value, labels, keep):
    """``value`` summed over its labels ``keep`` lacks."""
    gone = [i for i, label in enumerate(labels) if label not in keep]
    if not gone:
        return value, labels
    summed = value.sum(axis=tuple(gone), dtype=value.dtype)  # einsum keeps the dtype
    return summed, [x for i, x in enumerate(labels) if i not in gone]


def _pair(x, y, keep, sizes):
    """Two labelled operands multiplied: a matrix product over the labels
    they share and ``keep`` lacks, their shared kept labels its batch."""
    (a, la), (b, lb) = _summed(*x, keep | set(y[1])), _summed(*y, keep | set(x[1]))
    shared = [label for label in la if label in lb]
    batch = [label for label in shared if label in keep]
    contracted = [label for label in shared if label not in keep]
    left = [label for label in la if label not in shared]
    right = [label for label in lb if label not in shared]
    if not (contracted and left and right):
        # Products, or dots (a fused product and sum reads each operand
        # once; a matrix product pays off only with rows and columns).
        labels = batch + left + right + contracted
        product = _aligned(a, la, labels) * _aligned(b, lb, labels)
        return _summed(product, labels, set(batch + left + right))
    a = _grouped(a, la, [batch, left, contracted], sizes)
    b = _grouped(b, lb, [batch, contracted, right], sizes)
    product = a @ b
    shape = tuple(product.shape[:len(batch)]) + tuple(sizes[label] for label in left + right)
    return product.reshape(shape) if shape != product.shape else product, batch + left + right


def _aligned(value, labels, order):
    """``value`` with its axes in ``order`` (length 1 for labels it lacks),
    to broadcast against other operands aligned the same way."""
    present = [label for label in order if label in labels]
    value = value.transpose([labels.index(label) for label in present]) if present != labels else value
    shape, at = [], 0
    for label in order:
        if label in labels:
            shape.append(value.shape[at])
            at += 1
        else:
            shape.append(1)
    return value.reshape(tuple(shape)) if tuple(shape) != value.shape else value


def _grouped(value, labels, groups, sizes):
    """``value`` as ``(*batch, rows, columns)``: its axes ordered by
    ``groups`` (batch labels, then two groups, each merged into one axis),
    length-1 axes of the contracted labels broadcast to their length."""
    batch, rows, columns = groups
    order = [labels.index(label) for label in batch + rows + columns]
    if order != list(range(len(order))):
        value = value.transpose(order)
    wanted = tuple(value.shape[:len(batch)]) + tuple(sizes[label] for label in rows + columns)
    if wanted != value.shape:
        value = broadcast_to(value, wanted)
    n_rows = _product(sizes[label] for label in rows)
    n_columns = _product(sizes[label] for label in columns)
    shape = tuple(value.shape[:len(batch)]) + (n_rows, n_columns)
    return value.reshape(shape) if shape != value.shape else value


def _product(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


# The ufuncs `np.vecdot`, `np.matvec` and `np.vecmat` of lazy arrays (`_ufuncs`).
register(OPERATIONS, vecdot, matvec, vecmat)
