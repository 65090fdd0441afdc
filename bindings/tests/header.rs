//! The committed `include/lazyfuse.h` must equal a fresh cbindgen
//! generation. `LAZYFUSE_UPDATE_HEADER=1 cargo test -p lazyfuse-ffi --test header`
//! rewrites it.

#![allow(clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn committed_header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("UTF-8 header");
    let path = crate_dir.join("include/lazyfuse.h");
    if std::env::var_os("LAZYFUSE_UPDATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        panic!(
            "bindings/include/lazyfuse.h is out of date: run \
             LAZYFUSE_UPDATE_HEADER=1 cargo test -p lazyfuse-ffi --test header and commit it"
        );
    }
}
