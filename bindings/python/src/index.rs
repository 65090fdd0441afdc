//! Basic indexing's hot path: a key of Python ints and slices only (a
//! stencil's `u[1:-1, 2:]`), resolved and applied in one native call. The
//! Python side (`_views.get`) makes the view from what this returns and
//! handles every other key itself: `...`, `None`, NumPy integers, arrays,
//! and every error, with NumPy's messages.

use lazyfuse::Array;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PySlice, PyTuple};

/// What one axis of a key selects: `(start, step, length)`, as
/// `_views._resolve` gives it.
pub(crate) type Selected = (isize, isize, usize);

/// A basic index applied: the view's native array, the region it selects
/// of every axis, and the axes ints dropped.
pub(crate) struct Basic {
    pub(crate) native: Array,
    pub(crate) region: Vec<Selected>,
    pub(crate) drop: Vec<usize>,
}

/// `array[key]` when `key` is an int, a slice, or a tuple of at most
/// `ndim` of them, with every int in bounds; `None` for any other key
/// (the Python side then resolves it, and raises its errors).
pub(crate) fn basic(array: &Array, key: &Bound<'_, PyAny>) -> PyResult<Option<Basic>> {
    let shape = array.shape().to_vec();
    let one;
    let parts: &Bound<'_, PyTuple> = match key.downcast::<PyTuple>() {
        Ok(tuple) => tuple,
        Err(_) => {
            one = PyTuple::new(key.py(), [key])?;
            &one
        }
    };
    if parts.len() > shape.len() {
        return Ok(None);
    }
    let mut region = Vec::with_capacity(shape.len());
    let mut drop = Vec::new();
    for (axis, part) in parts.iter().enumerate() {
        let n = shape[axis];
        match select(&part, n)? {
            Some(Select::Range(selected)) => region.push(selected),
            Some(Select::Index(i)) => {
                region.push((i, 1, 1));
                drop.push(axis);
            }
            None => return Ok(None),
        }
    }
    region.extend(shape[region.len()..].iter().map(|&n| (0, 1, n)));
    let mut native = array.clone();
    for (axis, &(start, step, length)) in region.iter().enumerate() {
        if step != 1 || start != 0 || length != shape[axis] {
            let stop = start + step * length as isize;
            native = native.slice_axis(axis, Some(start), (stop >= 0).then_some(stop), step);
        }
    }
    if !drop.is_empty() {
        let kept: Vec<usize> = region
            .iter()
            .enumerate()
            .filter(|(axis, _)| !drop.contains(axis))
            .map(|(_, &(_, _, length))| length)
            .collect();
        native = native.reshape(&kept);
    }
    Ok(Some(Basic {
        native,
        region,
        drop,
    }))
}

/// One axis of a basic key.
enum Select {
    Range(Selected),
    Index(isize),
}

/// What `part` selects of an axis of `n` elements: a slice's range, an
/// in-bounds Python int's element; `None` for anything else (a bool is an
/// int to Python, not to an index).
fn select(part: &Bound<'_, PyAny>, n: usize) -> PyResult<Option<Select>> {
    if let Ok(slice) = part.downcast::<PySlice>() {
        let length = isize::try_from(n).unwrap_or(isize::MAX);
        let indices = slice.indices(length)?;
        return Ok(Some(Select::Range((
            indices.start,
            indices.step,
            indices.slicelength,
        ))));
    }
    if part.is_exact_instance_of::<PyInt>() {
        let Ok(i) = part.extract::<isize>() else {
            return Ok(None);
        };
        let n = isize::try_from(n).unwrap_or(isize::MAX);
        let i = if i < 0 { i + n } else { i };
        return Ok((0..n).contains(&i).then_some(Select::Index(i)));
    }
    Ok(None)
}
