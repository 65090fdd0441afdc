//! Pinned host memory ([`Session::pinned`], Numba's `cuda.pinned_array`):
//! host buffers page-locked for the session's device, so that copies to
//! and from them go straight to the device with no staging copy.
//!
//! A [`PinnedBuf`] owns its buffer behind an `Arc`. An array made from it
//! ([`PinnedBuf::array`], or [`Session::from_slice`] of the whole buffer)
//! shares the buffer instead of copying it; writing the `PinnedBuf` while
//! such an array lives copies the buffer first (copy on write), so array
//! values stay immutable. A buffer stays pinned until no array, copy in
//! flight or `PinnedBuf` holds it: the session then unpins and frees it
//! (at its next pinned allocation, or `PinnedBuf` drop).
//!
//! A [`MappedBuf`] ([`Session::mapped`], Numba's `cuda.mapped_array`) is a
//! pinned buffer also mapped into the device's address space: arrays made
//! from it are read by kernels in place (nothing is uploaded), and results
//! read into it are written there by the device, with no copy.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard, PoisonError, Weak};

use crate::array::Array;
use crate::element::{Element, HostBuffer};
use crate::error::{Error, Result};
use crate::node::Node;
use crate::session::{PinnedRegistry, Session};
use crate::shape::{checked_len, format_shape, Shape};

/// Page-locked host memory of `T` elements (ordinary memory on engines
/// without a device): uploads read it and `read_into` writes it with no
/// staging copy. Made by [`Session::pinned`]; derefs to `[T]`.
pub struct PinnedBuf<T: Element> {
    buffer: Arc<HostBuffer>,
    session: Session,
    /// Whether the registry lists the buffer for `from_slice` to find. A
    /// write unlists it (a listed buffer has a weak reference, and only an
    /// unreferenced one can be written); the next read lists it again.
    listed: AtomicBool,
    /// Mapped into the device's address space, not only page-locked.
    mapped: bool,
    element: PhantomData<T>,
}

impl<T: Element> fmt::Debug for PinnedBuf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuf")
            .field("dtype", &T::DTYPE)
            .field("len", &self.buffer.len())
            .field("backend", &self.session.backend_name())
            .finish()
    }
}

impl Session {
    /// Numba's `cuda.pinned_array(n)`: `n` zeroed elements of page-locked
    /// host memory for this session's device (ordinary memory on `cpu` and
    /// the reference evaluator). Errors if the device refuses to pin it.
    pub fn pinned<T: Element>(&self, n: usize) -> Result<PinnedBuf<T>> {
        self.page_locked(n, false)
    }

    /// Numba's `cuda.mapped_array(n)`: `n` zeroed elements of host memory
    /// mapped into this session's device (ordinary memory on `cpu` and the
    /// reference evaluator): arrays made from it are read by kernels in
    /// place, and `read_into` it is written by the device, with no copies
    /// (`Stats::mapped_bytes` counts that traffic). Errors if the device
    /// refuses to map it.
    pub fn mapped<T: Element>(&self, n: usize) -> Result<MappedBuf<T>> {
        self.page_locked(n, true).map(MappedBuf)
    }

    fn page_locked<T: Element>(&self, n: usize, mapped: bool) -> Result<PinnedBuf<T>> {
        let elements = crate::element::try_vec(T::from_wide(crate::Wide::Int(0)), n)?;
        let buffer = Arc::new(T::into_buffer(elements));
        self.pin(&buffer, mapped)?;
        Ok(PinnedBuf {
            buffer,
            session: self.clone(),
            listed: AtomicBool::new(false),
            mapped,
            element: PhantomData,
        })
    }

    /// Pins `buffer`, and maps it into the device when `mapped`.
    fn pin(&self, buffer: &Arc<HostBuffer>, mapped: bool) -> Result<()> {
        let mut registry = self.registry();
        self.sweep(&mut registry);
        match mapped {
            true => self.engine().map_host(buffer),
            false => self.engine().pin_host(buffer),
        }
    }

    /// Lists `buffer` for [`Session::pinned_buffer_of`].
    fn list(&self, buffer: &Arc<HostBuffer>) {
        self.registry().live.push(Arc::downgrade(buffer));
    }

    /// Drops the registry's weak references to `buffer`.
    fn unlist(&self, buffer: &Arc<HostBuffer>) {
        self.registry()
            .live
            .retain(|weak| !std::ptr::eq(weak.as_ptr(), Arc::as_ptr(buffer)));
    }

    /// Hands a pinned buffer back: unpinned and freed once nothing else
    /// holds it.
    fn retire(&self, buffer: Arc<HostBuffer>) {
        let mut registry = self.registry();
        registry.retired.push(buffer);
        self.sweep(&mut registry);
    }

    /// Unpins and frees the retired buffers no one holds any more.
    fn sweep(&self, registry: &mut PinnedRegistry) {
        let engine = self.engine();
        registry.retired.retain(|buffer| {
            let held = Arc::strong_count(buffer) > 1;
            if !held {
                engine.unpin_host(buffer);
            }
            held
        });
        registry.live.retain(|weak| weak.strong_count() > 0);
    }

    /// The live pinned buffer whose elements are exactly `data`, if any.
    pub(crate) fn pinned_buffer_of<T: Element>(&self, data: &[T]) -> Option<Arc<HostBuffer>> {
        let registry = self.registry();
        registry
            .live
            .iter()
            .filter_map(Weak::upgrade)
            .find(|buffer| {
                T::slice_of(buffer).is_some_and(|s| {
                    std::ptr::eq(s.as_ptr(), data.as_ptr()) && s.len() == data.len()
                })
            })
    }

    fn registry(&self) -> MutexGuard<'_, PinnedRegistry> {
        self.pinned_registry()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Element> PinnedBuf<T> {
    /// An array of `shape` (row-major) holding this buffer's elements,
    /// sharing them: no copy now, and uploads read the pinned memory
    /// directly. Writing the buffer later copies it first, so the array
    /// keeps these values. Errors if the element count differs.
    pub fn array(&self, shape: &[usize]) -> Result<Array> {
        if checked_len(shape) != Some(self.buffer.len()) {
            return Err(Error::shape(
                "PinnedBuf::array",
                format!(
                    "a pinned buffer of {} elements cannot have shape {} (expected {} elements)",
                    self.buffer.len(),
                    format_shape(shape),
                    checked_len(shape).map_or("too many".to_string(), |n| n.to_string())
                ),
            ));
        }
        let node = Node::source_shared(Arc::clone(&self.buffer), Shape::from_slice(shape));
        Ok(self.session.wrap(node))
    }

    /// Whether an array (or a copy in flight) shares the buffer now, so
    /// that the next write copies it.
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.buffer) > 1
    }

    /// Numba's `cuda.to_device(h)`: an array of `shape` holding a device
    /// copy of the buffer's elements, uploaded now straight from the pinned
    /// memory (no staging copy) and complete when this returns. The array
    /// does not share the buffer: later writes of it (through this handle or
    /// any other view of its memory) do not reach the array. On engines
    /// without a device, the array holds a host copy.
    pub fn upload(&self, shape: &[usize]) -> Result<Array> {
        let shared = self.array(shape)?;
        let node = shared.node();
        let engine = self.session.engine();
        let env = self.session.env();
        let Some(device) = engine.to_device(&node.residency(), env)? else {
            return self.session.from_buffer((*self.buffer).clone(), shape);
        };
        engine.synchronize(env.stream)?;
        // Only the device copy: the array forgets the pinned memory.
        node.set_residency(crate::node::Residency::device(device));
        Ok(shared)
    }
}

impl<T: Element> Deref for PinnedBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        if !self.listed.load(Ordering::Acquire) {
            self.session.list(&self.buffer);
            self.listed.store(true, Ordering::Release);
        }
        T::slice_of(&self.buffer).unwrap_or_default()
    }
}

impl<T: Element> DerefMut for PinnedBuf<T> {
    /// The elements to write. While an array shares them, they are copied
    /// into a new pinned buffer first (if the device refuses to pin the
    /// copy, it is ordinary memory, and copies of it are staged).
    fn deref_mut(&mut self) -> &mut [T] {
        if *self.listed.get_mut() {
            self.session.unlist(&self.buffer);
            *self.listed.get_mut() = false;
        }
        if Arc::get_mut(&mut self.buffer).is_none() {
            let copy = Arc::new((*self.buffer).clone());
            let _ = self.session.pin(&copy, self.mapped);
            let old = std::mem::replace(&mut self.buffer, copy);
            self.session.retire(old);
        }
        Arc::get_mut(&mut self.buffer)
            .and_then(T::slice_of_mut)
            .unwrap_or_default()
    }
}

impl<T: Element> Drop for PinnedBuf<T> {
    fn drop(&mut self) {
        let buffer = std::mem::replace(&mut self.buffer, Arc::new(T::into_buffer(Vec::new())));
        self.session.retire(buffer);
    }
}

/// Host memory mapped into the device's address space, of `T` elements
/// (ordinary memory on engines without a device): kernels read the arrays
/// made from it in place, and `read_into` it is written by the device,
/// with no copies. Made by [`Session::mapped`]; derefs to `[T]`. As with
/// [`PinnedBuf`], arrays share the buffer and writing it while one does
/// copies it first, so array values stay immutable.
#[derive(Debug)]
pub struct MappedBuf<T: Element>(PinnedBuf<T>);

impl<T: Element> MappedBuf<T> {
    /// An array of `shape` (row-major) over this buffer's elements, read
    /// by kernels in place; errors if the element count differs.
    pub fn array(&self, shape: &[usize]) -> Result<Array> {
        self.0.array(shape)
    }

    /// Whether an array shares the buffer now, so that the next write
    /// copies it.
    pub fn is_shared(&self) -> bool {
        self.0.is_shared()
    }

    /// An array of `shape` holding a device copy of the buffer's current
    /// elements, made now (the device reads the mapped memory for it); later
    /// writes of the buffer do not reach the array.
    pub fn upload(&self, shape: &[usize]) -> Result<Array> {
        let session = &self.0.session;
        session
            .from_buffer((*self.0.buffer).clone(), shape)?
            .to_device()
    }
}

impl<T: Element> Deref for MappedBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: Element> DerefMut for MappedBuf<T> {
    /// The elements to write (copied into a new mapped buffer first while
    /// an array shares them).
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

/// The address ranges of the host buffers an engine has pinned, so that it
/// tells pinned memory (copied directly) from pageable memory (staged).
#[derive(Debug, Default)]
pub struct PinnedRanges {
    ranges: std::sync::Mutex<Vec<(usize, usize)>>,
}

impl PinnedRanges {
    /// Records the memory of `bytes` as pinned; false if it already was.
    pub fn insert(&self, bytes: &[u8]) -> bool {
        let range = (bytes.as_ptr() as usize, bytes.len());
        let mut ranges = self.lock();
        if ranges.contains(&range) {
            return false;
        }
        ranges.push(range);
        true
    }

    /// Forgets the memory of `bytes`; false if it was not recorded.
    pub fn remove(&self, bytes: &[u8]) -> bool {
        let range = (bytes.as_ptr() as usize, bytes.len());
        let mut ranges = self.lock();
        let before = ranges.len();
        ranges.retain(|r| *r != range);
        ranges.len() != before
    }

    /// Whether all of `bytes` (non-empty) lies in one pinned range.
    pub fn contains(&self, bytes: &[u8]) -> bool {
        let (start, len) = (bytes.as_ptr() as usize, bytes.len());
        len > 0
            && self
                .lock()
                .iter()
                .any(|&(s, l)| s <= start && start + len <= s + l)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(usize, usize)>> {
        self.ranges.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
