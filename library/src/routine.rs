//! The opening every host routine shares: its arguments as the CPU backend
//! hands them over (`HostRoutine::run`), each taken by position, with the
//! routine's name in the error of a launch that lacks one or gives it in
//! another dtype (an internal error: the routine's own kernel declared
//! them).

use lazyfuse_core::{Element, Error, HostBuffer, Result, SliceMut};

/// A routine's array arguments, read by position.
#[derive(Clone, Copy)]
pub(crate) struct Args<'a> {
    op: &'static str,
    arrays: &'a [&'a HostBuffer],
}

impl<'a> Args<'a> {
    /// The arguments `arrays` of routine `op`.
    pub(crate) fn new(op: &'static str, arrays: &'a [&'a HostBuffer]) -> Args<'a> {
        Args { op, arrays }
    }

    /// An internal error of this routine.
    pub(crate) fn error(self, what: &str) -> Error {
        Error::internal(self.op, what)
    }

    /// Array argument `i`.
    pub(crate) fn array(self, i: usize) -> Result<&'a HostBuffer> {
        self.arrays
            .get(i)
            .copied()
            .ok_or_else(|| self.error(&format!("a launch without its argument {i}")))
    }

    /// The elements of array argument `i`, of type `T`.
    pub(crate) fn values<T: Element>(self, i: usize) -> Result<&'a [T]> {
        self.array(i)?
            .as_slice()
            .ok_or_else(|| self.error(&format!("argument {i} is not {}", T::DTYPE)))
    }

    /// Written argument `i` of `outputs`.
    pub(crate) fn output<'s, 'o>(
        self,
        outputs: &'s mut [SliceMut<'o>],
        i: usize,
    ) -> Result<&'s mut SliceMut<'o>> {
        outputs
            .get_mut(i)
            .ok_or_else(|| self.error(&format!("a launch without its output {i}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_mistyped_arguments_are_errors_naming_the_routine() {
        let (a, b) = (HostBuffer::F32(vec![1.0, 2.0]), HostBuffer::I64(vec![3]));
        let arrays = [&a, &b];
        let args = Args::new("sort", &arrays);
        assert_eq!(args.values::<f32>(0).ok(), Some(&[1.0f32, 2.0][..]));
        assert_eq!(args.values::<i64>(1).ok(), Some(&[3i64][..]));
        let mistyped = args.values::<f64>(1).err().map(|e| e.to_string());
        assert!(mistyped.is_some_and(|m| m.contains("sort") && m.contains("argument 1")));
        assert!(args.array(2).is_err());
        let mut none: [SliceMut<'_>; 0] = [];
        assert!(args.output(&mut none, 0).is_err());
    }
}
