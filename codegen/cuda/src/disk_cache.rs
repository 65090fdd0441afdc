//! Compiled kernels cached on disk, so that a new process does not pay NVRTC
//! again for kernels an earlier one compiled.
//!
//! The cache is an optimisation only: every entry is validated (magic, key,
//! the source the key hashed, lengths, checksum) before use, and anything
//! doubtful is a miss.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use lazyfuse_core::{Error, Result};

const MAGIC: &[u8] = b"lazyfuse-kernel-cache v2\n";

/// The kind of image a kernel was compiled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// PTX text, JIT-compiled by the driver.
    Ptx,
    /// A cubin for one architecture.
    Cubin,
}

impl ImageKind {
    fn extension(self) -> &'static str {
        match self {
            ImageKind::Ptx => "ptx",
            ImageKind::Cubin => "cubin",
        }
    }
}

/// What a cached kernel image depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Hash of the generated program (source and compile options).
    pub program_hash: u64,
    /// The source the hash was taken of: stored in the entry and compared
    /// on load, so that two sources with one hash never share an image.
    pub source: String,
    /// Target architecture, e.g. `"sm_80"` or `"compute_80"`.
    pub arch: String,
    /// NVRTC version (major, minor) that produced the image.
    pub nvrtc_version: (i32, i32),
    /// PTX or cubin.
    pub kind: ImageKind,
}

impl CacheKey {
    fn file_name(&self) -> String {
        let arch: String = self
            .arch
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let (major, minor) = self.nvrtc_version;
        format!(
            "{:016x}-{arch}-nvrtc{major}.{minor}.{}",
            self.program_hash,
            self.kind.extension()
        )
    }

    /// The exact key, stored in the file: sanitised file names can collide,
    /// and `{:?}` keeps an odd arch string on one line.
    fn canonical(&self) -> String {
        let (major, minor) = self.nvrtc_version;
        format!(
            "hash={:016x} arch={:?} nvrtc={major}.{minor} kind={}\n",
            self.program_hash,
            self.arch,
            self.kind.extension()
        )
    }
}

/// 64-bit FNV-1a: no dependency, and enough to detect torn or flipped bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn read_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?))
}

/// Why an entry was rejected: a corrupt one is deleted, a foreign one is left to be overwritten.
enum Invalid {
    Corrupt,
    OtherKey,
}

fn parse<'a>(file: &'a [u8], key: &CacheKey) -> std::result::Result<&'a [u8], Invalid> {
    let rest = file.strip_prefix(MAGIC).ok_or(Invalid::Corrupt)?;
    let canonical = key.canonical();
    let line_end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(Invalid::Corrupt)?;
    let (line, rest) = rest.split_at(line_end + 1);
    if line != canonical.as_bytes() {
        return Err(Invalid::OtherKey);
    }
    let (header, body) = rest.split_at_checked(24).ok_or(Invalid::Corrupt)?;
    let source_length = read_u64(header).ok_or(Invalid::Corrupt)?;
    let length = read_u64(&header[8..]).ok_or(Invalid::Corrupt)?;
    let checksum = read_u64(&header[16..]).ok_or(Invalid::Corrupt)?;
    let source_length = usize::try_from(source_length).map_err(|_| Invalid::Corrupt)?;
    let expected = usize::try_from(length)
        .ok()
        .and_then(|l| l.checked_add(source_length));
    if expected != Some(body.len()) || fnv1a(body) != checksum {
        return Err(Invalid::Corrupt);
    }
    let (source, payload) = body.split_at(source_length);
    if source != key.source.as_bytes() {
        // The same hash of another source: a miss, never its image.
        return Err(Invalid::OtherKey);
    }
    Ok(payload)
}

/// A directory of compiled kernel images, or a disabled cache that stores nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCache {
    dir: Option<PathBuf>,
}

impl DiskCache {
    /// Environment variable overriding the directory.
    pub const DIR_ENV: &'static str = "LAZYFUSE_CACHE_DIR";
    /// Environment variable disabling the cache when set to a non-empty value other than "0".
    pub const DISABLE_ENV: &'static str = "LAZYFUSE_NO_DISK_CACHE";

    /// From the environment: disabled by [`Self::DISABLE_ENV`]; else [`Self::DIR_ENV`];
    /// else `$XDG_CACHE_HOME/lazyfuse/kernels`; else `$HOME/.cache/lazyfuse/kernels`;
    /// else disabled.
    pub fn from_env() -> DiskCache {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// [`Self::from_env`] with the variables read through `lookup`; empty values
    /// count as unset, and a relative `XDG_CACHE_HOME` is ignored as the XDG
    /// specification requires.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> DiskCache {
        let var = |name: &str| lookup(name).filter(|value| !value.is_empty());
        if var(Self::DISABLE_ENV).is_some_and(|value| value != "0") {
            return Self::disabled();
        }
        if let Some(dir) = var(Self::DIR_ENV) {
            return Self::at(dir);
        }
        let xdg = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|path| path.is_absolute());
        let base = xdg.or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")));
        match base {
            Some(base) => Self::at(base.join("lazyfuse").join("kernels")),
            None => Self::disabled(),
        }
    }

    /// A cache in `dir` (created on the first store).
    pub fn at(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache {
            dir: Some(dir.into()),
        }
    }

    /// A cache that stores nothing and never hits.
    pub fn disabled() -> DiskCache {
        DiskCache { dir: None }
    }

    /// The directory, or `None` when disabled.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn path(&self, key: &CacheKey) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(key.file_name()))
    }

    /// The validated image, or `None` when absent, unreadable or corrupt. A corrupt
    /// or truncated entry is deleted so that the next store rewrites it.
    pub fn load(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.path(key)?;
        let file = fs::read(&path).ok()?;
        match parse(&file, key) {
            Ok(payload) => Some(payload.to_vec()),
            Err(Invalid::OtherKey) => None,
            Err(Invalid::Corrupt) => {
                // Another process may have just renamed a good entry over this
                // path; removing it then only costs one more compile.
                let _ = fs::remove_file(&path);
                None
            }
        }
    }

    /// Writes `image` atomically (a unique temporary file in the same directory,
    /// renamed over the entry), creating the directory if needed. Errors are
    /// returned; callers may ignore them since the cache is only an optimisation.
    pub fn store(&self, key: &CacheKey, image: &[u8]) -> Result<()> {
        let (Some(dir), Some(path)) = (self.dir.as_ref(), self.path(key)) else {
            return Ok(());
        };
        let io_error = |what: &str, path: &Path, error: std::io::Error| Error::Device {
            op: "kernel disk cache store".into(),
            message: format!("{what} {}: {error}", path.display()),
        };
        fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, e))?;

        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = dir.join(format!(
            ".{}.tmp-{}-{}-{nanos}",
            key.file_name(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));

        let mut contents = Vec::with_capacity(MAGIC.len() + 128 + key.source.len() + image.len());
        contents.extend_from_slice(MAGIC);
        contents.extend_from_slice(key.canonical().as_bytes());
        let body = [key.source.as_bytes(), image].concat();
        contents.extend_from_slice(&(key.source.len() as u64).to_le_bytes());
        contents.extend_from_slice(&(image.len() as u64).to_le_bytes());
        contents.extend_from_slice(&fnv1a(&body).to_le_bytes());
        contents.extend_from_slice(&body);

        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(&contents)?;
                // Without it a crash can leave a renamed but empty entry; the
                // checksum would reject it, but the compile would be lost.
                file.sync_all()
            })
            .map_err(|e| io_error("writing", &temp, e))
            .and_then(|()| fs::rename(&temp, &path).map_err(|e| io_error("renaming", &path, e)));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            static N: AtomicU64 = AtomicU64::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let pid = std::process::id();
            let dir = std::env::temp_dir().join(format!("lazyfuse-disk-cache-{name}-{pid}-{n}"));
            let _ = fs::remove_dir_all(&dir);
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn key_with(edit: impl FnOnce(&mut CacheKey)) -> CacheKey {
        let mut key = CacheKey {
            program_hash: 0xdead_beef_1234_5678,
            source: "extern \"C\" __global__ void k() {}".into(),
            arch: "sm_80".into(),
            nvrtc_version: (12, 8),
            kind: ImageKind::Cubin,
        };
        edit(&mut key);
        key
    }

    fn key() -> CacheKey {
        key_with(|_| {})
    }

    #[test]
    fn round_trip() {
        let tmp = TempDir::new("round-trip");
        let cache = DiskCache::at(tmp.0.join("nested"));
        assert_eq!(cache.load(&key()), None);
        cache.store(&key(), b"\x7fELF image bytes").unwrap();
        assert_eq!(cache.load(&key()).unwrap(), b"\x7fELF image bytes");
        let empty = key_with(|k| k.kind = ImageKind::Ptx);
        cache.store(&empty, b"").unwrap();
        assert_eq!(cache.load(&empty).unwrap(), b"");
    }

    #[test]
    fn different_key_misses() {
        let tmp = TempDir::new("other-key");
        let cache = DiskCache::at(&tmp.0);
        cache.store(&key(), b"image").unwrap();
        for other in [
            key_with(|k| k.program_hash = 1),
            key_with(|k| k.nvrtc_version = (12, 9)),
            key_with(|k| k.kind = ImageKind::Ptx),
            key_with(|k| k.arch = "sm_86".into()),
        ] {
            assert_eq!(cache.load(&other), None, "{other:?}");
        }
        // The same hash of another source: a miss, not its image.
        assert_eq!(cache.load(&key_with(|k| k.source.push(' '))), None);
        // Same file name after sanitising, different key: a miss, not a hit.
        let colliding = key_with(|k| k.arch = "sm-80".into());
        assert_eq!(colliding.file_name(), key().file_name());
        assert_eq!(cache.load(&colliding), None);
        assert_eq!(cache.load(&key()).unwrap(), b"image");
    }

    fn corrupt_entry(name: &str, damage: impl Fn(&mut Vec<u8>)) {
        let tmp = TempDir::new(name);
        let cache = DiskCache::at(&tmp.0);
        cache.store(&key(), b"some kernel image payload").unwrap();
        let path = tmp.0.join(key().file_name());
        let mut bytes = fs::read(&path).unwrap();
        damage(&mut bytes);
        fs::write(&path, bytes).unwrap();
        assert_eq!(cache.load(&key()), None);
        assert!(!path.exists(), "a corrupt entry is removed");
    }

    #[test]
    fn truncated_entry_is_rejected_and_removed() {
        corrupt_entry("truncated", |bytes| bytes.truncate(bytes.len() - 3));
        corrupt_entry("truncated-header", |bytes| bytes.truncate(MAGIC.len() + 10));
    }

    #[test]
    fn flipped_payload_byte_is_rejected() {
        corrupt_entry("flipped", |bytes| *bytes.last_mut().unwrap() ^= 0x01);
    }

    #[test]
    fn wrong_magic_is_rejected() {
        corrupt_entry("magic", |bytes| bytes[0] = b'X');
    }

    #[test]
    fn disabled_cache_stores_nothing() {
        let cache = DiskCache::disabled();
        assert_eq!(cache.dir(), None);
        cache.store(&key(), b"image").unwrap();
        assert_eq!(cache.load(&key()), None);
    }

    #[test]
    fn from_env_lookup_order() {
        let dir = |vars: &[(&str, &str)]| {
            let lookup = |name: &str| {
                let found = vars.iter().find(|(k, _)| *k == name);
                found.map(|(_, v)| OsString::from(v))
            };
            DiskCache::from_lookup(lookup).dir().map(Path::to_path_buf)
        };
        let some = |path: &str| Some(PathBuf::from(path));
        let mut all = vec![
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", "/xdg"),
            (DiskCache::DIR_ENV, "/custom"),
        ];
        assert_eq!(dir(&all), some("/custom"));
        assert_eq!(dir(&all[..2]), some("/xdg/lazyfuse/kernels"));
        assert_eq!(dir(&all[..1]), some("/home/u/.cache/lazyfuse/kernels"));
        let relative_xdg = [("XDG_CACHE_HOME", "rel"), ("HOME", "/h")];
        assert_eq!(dir(&relative_xdg), some("/h/.cache/lazyfuse/kernels"));
        assert_eq!(dir(&[]), None);
        assert_eq!(dir(&[(DiskCache::DIR_ENV, ""), ("HOME", "")]), None);
        for (value, expected) in [
            ("1", None),
            ("yes", None),
            ("0", some("/custom")),
            ("", some("/custom")),
        ] {
            all.push((DiskCache::DISABLE_ENV, value));
            assert_eq!(dir(&all), expected, "{value:?}");
            all.pop();
        }
    }

    #[test]
    fn store_overwrites_atomically() {
        let tmp = TempDir::new("overwrite");
        let cache = DiskCache::at(&tmp.0);
        cache.store(&key(), b"first image").unwrap();
        cache.store(&key(), b"second, longer image").unwrap();
        assert_eq!(cache.load(&key()).unwrap(), b"second, longer image");
        let names: Vec<_> = fs::read_dir(&tmp.0)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            [OsString::from(key().file_name())],
            "no temporary file left"
        );
    }
}
