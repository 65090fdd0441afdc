//! Where a kernel's values are during one chunk, and checked, typed access
//! to one tile of them.
//!
//! The register machine calls one step per operation and tile, and a tile
//! is a few hundred elements: looking a value up through `HostBuffer`
//! enums and re-slicing them on every call costs as much as the loop it
//! feeds. A frame resolves every value once per chunk to a *slot* — a
//! pointer, the dtype and how the tile is found from it — and a step asks
//! for its destination and operands in one call, which checks what makes
//! the slices sound: dtypes, the tile within the chunk and the registers,
//! a writable destination that overlaps no operand. All of this module's
//! `unsafe` is the slice building those checks allow.

use std::marker::PhantomData;

use lazyfuse_core::SliceMut;
use lazyfuse_core::{with_buffer, with_slice_mut, DType, Element, Error, HostBuffer, Result};

use super::loops::Arg;

fn internal(message: &str) -> Error {
    Error::internal("cpu frame", message)
}

/// One cache line: tile registers are made of them, so that they start on
/// a line (vector loads and stores then never straddle two).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// A tile-sized scratch register for values of one dtype: zeroed when
/// first made, then only ever written with values of that dtype (one
/// dropped is kept by its thread and reused for the same dtype only), so
/// its bytes are always valid values of it.
pub struct TileReg {
    lines: Vec<Line>,
    dtype: DType,
}

/// Tile registers each thread keeps for the next launch (`spare`), with
/// their dtype.
const KEPT_TILES: usize = 64;

thread_local! {
    static TILES: crate::spare::Store<(DType, Vec<Line>)> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl TileReg {
    /// A register for `elements` values of `dtype`: one this thread kept
    /// (holding values of `dtype`), else zeroed.
    pub fn new(dtype: DType, elements: usize) -> TileReg {
        let len = (elements * dtype.size()).div_ceil(64);
        let kept = crate::spare::take_from(&TILES, |(d, lines)| *d == dtype && lines.len() == len);
        TileReg {
            lines: kept.map_or_else(|| vec![Line([0; 64]); len], |(_, lines)| lines),
            dtype,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.lines.len() * 64 / self.dtype.size()
    }
}

impl Drop for TileReg {
    fn drop(&mut self) {
        let lines = std::mem::take(&mut self.lines);
        crate::spare::give_to(&TILES, (self.dtype, lines), |kept, _| {
            kept.len() < KEPT_TILES
        });
    }
}

impl std::fmt::Debug for TileReg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TileReg({:?} x {})", self.dtype, self.capacity())
    }
}

/// How the current tile of a slot is found from its pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Not bound (reading it is an error).
    Unbound,
    /// Element `i` of the chunk is at `ptr + i` (inputs, chunk registers,
    /// outputs): the tile starting at `start` is at `ptr + start`.
    Window,
    /// A tile register: the current tile is at `ptr`.
    Tile,
    /// One value at `ptr`, the same everywhere.
    Scalar,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    ptr: *mut u8,
    dtype: DType,
    place: Place,
    writable: bool,
}

const UNBOUND: Slot = Slot {
    ptr: std::ptr::null_mut(),
    dtype: DType::Bool,
    place: Place::Unbound,
    writable: false,
};

/// A frame's slot vector between chunks (kept to avoid an allocation per chunk).
#[derive(Debug, Default)]
pub struct FrameStorage(Vec<Slot>);

/// The slots of one chunk of `len` elements, borrowing what they point at
/// for `'a`.
pub struct Frame<'a> {
    slots: Vec<Slot>,
    len: usize,
    tile: usize,
    _borrows: PhantomData<&'a mut [u8]>,
}

/// An operand located but not yet turned into a reference.
enum Raw<T> {
    Slice(*const T, usize),
    Scalar(T),
}

/// The bytes a tile of a value occupies.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    fn new(ptr: *const u8, bytes: usize) -> Span {
        let start = ptr as usize;
        Span {
            start,
            end: start + bytes,
        }
    }

    fn overlaps(self, other: Span) -> bool {
        self.start < other.end && other.start < self.end
    }
}

/// The dtype of a slice's elements.
fn element_dtype<T: Element>(_: &[T]) -> DType {
    T::DTYPE
}

impl<'a> Frame<'a> {
    /// A frame of `count` unbound slots for a chunk of `len` elements whose
    /// tile registers hold `tile` elements, reusing `storage`'s allocation.
    pub fn new(storage: FrameStorage, count: usize, len: usize, tile: usize) -> Frame<'a> {
        let mut slots = storage.0;
        slots.clear();
        slots.resize(count, UNBOUND);
        Frame {
            slots,
            len,
            tile,
            _borrows: PhantomData,
        }
    }

    /// The slot vector, for the next chunk's frame.
    pub fn into_storage(self) -> FrameStorage {
        let mut slots = self.slots;
        slots.clear();
        FrameStorage(slots)
    }

    /// The chunk length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty chunk.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn set(&mut self, slot: usize, value: Slot) -> Result<()> {
        *self
            .slots
            .get_mut(slot)
            .ok_or_else(|| internal("a slot out of range"))? = value;
        Ok(())
    }

    /// Binds `slot` to elements `offset..offset + len` of `buffer` (read only).
    pub fn bind_window(
        &mut self,
        slot: usize,
        buffer: &'a HostBuffer,
        offset: usize,
    ) -> Result<()> {
        let len = self.len;
        with_buffer!(buffer, v => {
            let window = v
                .get(offset..offset + len)
                .ok_or_else(|| internal("an input window outside its buffer"))?;
            // From the whole buffer, not the window: compiled code may move
            // the pointer to other lines of the same buffer.
            self.set(slot, Slot {
                ptr: v.as_ptr().wrapping_add(offset) as *mut u8,
                dtype: element_dtype(window),
                place: Place::Window,
                writable: false,
            })
        })
    }

    /// Binds `slot` to element `index` of `buffer`, broadcast.
    pub fn bind_scalar(&mut self, slot: usize, buffer: &'a HostBuffer, index: usize) -> Result<()> {
        with_buffer!(buffer, v => {
            let value = v
                .get(index)
                .ok_or_else(|| internal("a broadcast element outside its buffer"))?;
            self.set(slot, Slot {
                ptr: v.as_ptr().wrapping_add(index) as *mut u8,
                dtype: element_dtype(std::slice::from_ref(value)),
                place: Place::Scalar,
                writable: false,
            })
        })
    }

    /// Binds `slot` to the first `len` elements of `slice`, written by steps.
    pub fn bind_output(&mut self, slot: usize, slice: SliceMut<'a>) -> Result<()> {
        let len = self.len;
        with_slice_mut!(slice, s => {
            let window = s
                .get_mut(..len)
                .ok_or_else(|| internal("an output shorter than the chunk"))?;
            let dtype = element_dtype(window);
            self.set(slot, Slot {
                ptr: window.as_mut_ptr().cast::<u8>(),
                dtype,
                place: Place::Window,
                writable: true,
            })
        })
    }

    /// Binds `slot` to an output of whole lines of the chunk's length, one
    /// after another (compiled code of the map-lines form writes them all
    /// through this pointer, which therefore covers the whole slice).
    pub fn bind_output_lines(&mut self, slot: usize, slice: SliceMut<'a>) -> Result<()> {
        let len = self.len;
        with_slice_mut!(slice, s => {
            if len == 0 || s.is_empty() || !s.len().is_multiple_of(len) {
                return Err(internal("an output that is not whole lines of the chunk"));
            }
            let dtype = element_dtype(s);
            self.set(slot, Slot {
                ptr: s.as_mut_ptr().cast::<u8>(),
                dtype,
                place: Place::Window,
                writable: true,
            })
        })
    }

    /// Binds slots to tile registers: `(slot, register)`; slots may share
    /// a register (values of one dtype whose lives do not overlap).
    pub fn bind_tiles(
        &mut self,
        regs: &'a mut [TileReg],
        homes: impl IntoIterator<Item = (usize, usize)>,
    ) -> Result<()> {
        for (slot, r) in homes {
            let reg = regs
                .get_mut(r)
                .ok_or_else(|| internal("a tile register out of range"))?;
            if reg.capacity() < self.tile {
                return Err(internal("a tile register smaller than a tile"));
            }
            let dtype = reg.dtype;
            let ptr = reg.lines.as_mut_ptr() as *mut u8;
            self.set(
                slot,
                Slot {
                    ptr,
                    dtype,
                    place: Place::Tile,
                    writable: true,
                },
            )?;
        }
        Ok(())
    }

    /// The pointer table compiled code reads: `table[slot]` is element 0 of
    /// a window, or the broadcast value; `table[slots + slot]`, each slot's
    /// stride from a line to the next, is 0 here (see
    /// `Machine::accumulate_lines`). Checks first that the slots `reads` are
    /// bound as the compiled variant expects — a broadcast value exactly
    /// where it says `true` — and the slots `writes` are writable windows,
    /// each of the dtype given.
    pub fn jit_table(
        &self,
        table: &mut Vec<*mut u8>,
        reads: impl IntoIterator<Item = (usize, DType, bool)>,
        writes: impl IntoIterator<Item = (usize, DType)>,
    ) -> Result<()> {
        let slot = |s: usize, dtype: DType| {
            self.slots
                .get(s)
                .filter(|slot| slot.dtype == dtype)
                .copied()
                .ok_or_else(|| internal("a compiled kernel's slot of another dtype"))
        };
        for (s, dtype, scalar) in reads {
            let expected = if scalar { Place::Scalar } else { Place::Window };
            if slot(s, dtype)?.place != expected {
                return Err(internal("a compiled kernel reads a value bound otherwise"));
            }
        }
        for (s, dtype) in writes {
            let bound = slot(s, dtype)?;
            if bound.place != Place::Window || !bound.writable {
                return Err(internal("a compiled kernel writes a read-only value"));
            }
        }
        table.clear();
        table.extend(self.slots.iter().map(|s| s.ptr));
        table.extend(self.slots.iter().map(|_| std::ptr::null_mut::<u8>()));
        Ok(())
    }

    fn check_span(&self, start: usize, len: usize, tile: bool) -> Result<()> {
        let within = start.checked_add(len).is_some_and(|end| end <= self.len);
        if within && (!tile || len <= self.tile) {
            Ok(())
        } else {
            Err(internal("a tile outside its chunk"))
        }
    }

    /// Where the tile `start..start + len` of `slot` is, checked to be of type `T`.
    fn locate<T: Element>(&self, slot: usize, start: usize) -> Result<(Slot, *mut u8)> {
        let s = *self
            .slots
            .get(slot)
            .ok_or_else(|| internal("a slot out of range"))?;
        if s.dtype != T::DTYPE {
            return Err(internal("a value read as another dtype"));
        }
        let ptr = match s.place {
            // In bounds: the callers check `start + len <= self.len`, and a
            // window holds `self.len` elements (checked when bound).
            Place::Window => s.ptr.wrapping_add(start * std::mem::size_of::<T>()),
            Place::Tile | Place::Scalar => s.ptr,
            Place::Unbound => return Err(internal("an unbound value was read")),
        };
        Ok((s, ptr))
    }

    fn source<T: Element>(&self, slot: usize, start: usize, len: usize) -> Result<(Raw<T>, Span)> {
        let (s, ptr) = self.locate::<T>(slot, start)?;
        let size = std::mem::size_of::<T>();
        Ok(if s.place == Place::Scalar {
            // SAFETY: a scalar slot points at one element of type `T`
            // (checked dtype) in a buffer borrowed for `'a` that no step
            // writes (scalar slots are never writable).
            (
                Raw::Scalar(unsafe { *(ptr as *const T) }),
                Span::new(ptr, size),
            )
        } else {
            (Raw::Slice(ptr as *const T, len), Span::new(ptr, len * size))
        })
    }

    fn destination<T: Element>(
        &self,
        slot: usize,
        start: usize,
        len: usize,
    ) -> Result<(*mut T, Span)> {
        let (s, ptr) = self.locate::<T>(slot, start)?;
        if !s.writable {
            return Err(internal("a step writes a read-only value"));
        }
        Ok((
            ptr as *mut T,
            Span::new(ptr, len * std::mem::size_of::<T>()),
        ))
    }

    /// Reads elements `start..start + len` of `slot` (within the chunk;
    /// a tile register only holds the current tile).
    pub fn read<T: Element>(&self, slot: usize, start: usize, len: usize) -> Result<Arg<'_, T>> {
        self.check_span(start, len, false)?;
        if self.slots.get(slot).is_some_and(|s| s.place == Place::Tile)
            && (start != 0 || len > self.tile)
        {
            return Err(internal("a tile register read outside its tile"));
        }
        let (raw, _) = self.source::<T>(slot, start, len)?;
        // SAFETY: no mutable reference into the frame is live while it is
        // borrowed immutably (destinations borrow it mutably).
        Ok(unsafe { materialize(raw) })
    }

    /// The destination tile of `dst` and the tiles of `N` operands of type
    /// `A`, after checking that the destination overlaps none of them.
    fn split<O: Element>(
        &mut self,
        dst: usize,
        sources: &[Span],
        start: usize,
        len: usize,
    ) -> Result<&mut [O]> {
        let (ptr, span) = self.destination::<O>(dst, start, len)?;
        if sources.iter().any(|s| s.overlaps(span)) {
            return Err(internal("a step's destination overlaps an operand"));
        }
        // SAFETY: `len` elements of `O` start at `ptr` (a window holding
        // the chunk, with the tile within it, or a tile register holding a
        // tile: checked), in memory borrowed mutably for `'a` (outputs and
        // registers; input slots are never writable). This is the only
        // reference to it while it lives: it borrows the frame mutably, so
        // no other destination exists, and it overlaps none of the operands
        // handed out with it (checked above).
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// The destination tile of `dst` and the tile of operand `a`.
    pub fn op1<O: Element, A: Element>(
        &mut self,
        dst: usize,
        a: usize,
        start: usize,
        len: usize,
    ) -> Result<(&mut [O], Arg<'_, A>)> {
        self.check_span(start, len, true)?;
        let (ra, sa) = self.source::<A>(a, start, len)?;
        let out = self.split::<O>(dst, &[sa], start, len)?;
        // SAFETY: the operand overlaps no live mutable reference: the only
        // one is `out`, checked disjoint from it.
        Ok((out, unsafe { materialize(ra) }))
    }

    /// The destination tile of `dst` and the tiles of operands `a`, `b`.
    pub fn op2<O: Element, A: Element, B: Element>(
        &mut self,
        dst: usize,
        [a, b]: [usize; 2],
        start: usize,
        len: usize,
    ) -> Result<(&mut [O], Arg<'_, A>, Arg<'_, B>)> {
        self.check_span(start, len, true)?;
        let (ra, sa) = self.source::<A>(a, start, len)?;
        let (rb, sb) = self.source::<B>(b, start, len)?;
        let out = self.split::<O>(dst, &[sa, sb], start, len)?;
        // SAFETY: as in `op1`: `out` is checked disjoint from both operands.
        Ok((out, unsafe { materialize(ra) }, unsafe { materialize(rb) }))
    }

    /// The destination tile of `dst` and the tiles of operands `c`, `a`, `b`.
    #[allow(clippy::type_complexity)] // the three operand types of a select
    pub fn op3<O: Element, C: Element, A: Element, B: Element>(
        &mut self,
        dst: usize,
        [c, a, b]: [usize; 3],
        start: usize,
        len: usize,
    ) -> Result<(&mut [O], Arg<'_, C>, Arg<'_, A>, Arg<'_, B>)> {
        self.check_span(start, len, true)?;
        let (rc, sc) = self.source::<C>(c, start, len)?;
        let (ra, sa) = self.source::<A>(a, start, len)?;
        let (rb, sb) = self.source::<B>(b, start, len)?;
        let out = self.split::<O>(dst, &[sc, sa, sb], start, len)?;
        // SAFETY: as in `op1`: `out` is checked disjoint from the operands.
        Ok((
            out,
            unsafe { materialize(rc) },
            unsafe { materialize(ra) },
            unsafe { materialize(rb) },
        ))
    }
}

/// Turns a located operand into a reference.
///
/// # Safety
/// The located elements must be initialised values of `T` that outlive
/// `'s`, and no mutable reference may overlap them during `'s`.
unsafe fn materialize<'s, T: Copy>(raw: Raw<T>) -> Arg<'s, T> {
    match raw {
        // SAFETY: the caller's contract; the elements were located in a
        // buffer or register holding them (see `Frame::source`).
        Raw::Slice(ptr, len) => Arg::Slice(unsafe { std::slice::from_raw_parts(ptr, len) }),
        Raw::Scalar(x) => Arg::Scalar(x),
    }
}
