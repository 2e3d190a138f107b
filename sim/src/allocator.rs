//! The global allocator of every binary that links the simulator (CLI, tests, benches):
//! mimalloc. A run is mostly small short-lived allocations (objects, keys, JSON values); mimalloc
//! is about a quarter faster than glibc's allocator on `benches/fuzz.rs`. Allocation order and
//! addresses never reach a trace.
//!
//! Why not the `mimalloc` crate's `MiMalloc`: it asks for every block through
//! `mi_malloc_aligned`, even at the word alignment every mimalloc block already has. That call
//! serves a block of at most 1 KiB from its page when the page's next block happens to be
//! aligned, and any larger one (a pod, a StatefulSet, a boxed reconcile future: 2 to 11 KB)
//! through its generic path, which over-allocates unless the size rounds to a power of two
//! (libmimalloc-sys 0.1.49, `c_src/mimalloc/v3/src/alloc-aligned.c`,
//! `mi_theap_malloc_zero_aligned_at_generic`). Here a layout aligned to at most a word takes
//! the plain `mi_malloc` path, as the standard library's `System` allocator takes plain
//! `malloc` up to the alignment malloc guarantees; a stricter alignment keeps the aligned calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};

/// Every mimalloc block is aligned to at least a word: block sizes are whole words and pages
/// start aligned (mimalloc `types.h`, `MI_INTPTR_SIZE`).
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

pub struct Mimalloc;

/// Whether a block of `layout` may come from the plain calls.
fn plain(layout: Layout) -> bool {
    layout.align() <= PLAIN_ALIGN
}

// SAFETY: each method hands its layout to the mimalloc call that honours it (a plain call only
// when the alignment is at most the word alignment every block has); `mi_free` and the
// reallocation calls take any block either kind of call returned.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = if plain(layout) {
            mi_malloc(layout.size())
        } else {
            mi_malloc_aligned(layout.size(), layout.align())
        };
        p.cast()
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = if plain(layout) {
            mi_zalloc(layout.size())
        } else {
            mi_zalloc_aligned(layout.size(), layout.align())
        };
        p.cast()
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi_free(ptr.cast::<c_void>());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = if plain(layout) {
            mi_realloc(ptr.cast::<c_void>(), new_size)
        } else {
            mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align())
        };
        p.cast()
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout};

    use super::Mimalloc;

    #[test]
    fn blocks_have_the_alignment_their_layout_asks_for() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 40, 1000, 1025, 2600, 11_000, 70_000] {
                let layout = Layout::from_size_align(size.max(align), align).unwrap();
                // SAFETY: a non-zero size; each block is freed with the layout it came with.
                unsafe {
                    let p = Mimalloc.alloc(layout);
                    assert!(
                        !p.is_null() && (p as usize).is_multiple_of(align),
                        "{layout:?}"
                    );
                    let z = Mimalloc.alloc_zeroed(layout);
                    assert!(
                        !z.is_null() && (z as usize).is_multiple_of(align),
                        "{layout:?}"
                    );
                    assert!(std::slice::from_raw_parts(z, layout.size())
                        .iter()
                        .all(|&b| b == 0));
                    p.write_bytes(7, layout.size());
                    let grown = Mimalloc.realloc(p, layout, layout.size() * 3);
                    assert!(
                        !grown.is_null() && (grown as usize).is_multiple_of(align),
                        "{layout:?}"
                    );
                    assert_eq!(
                        *grown.add(layout.size() - 1),
                        7,
                        "{layout:?}: contents kept"
                    );
                    let grown_layout = Layout::from_size_align(layout.size() * 3, align).unwrap();
                    Mimalloc.dealloc(grown, grown_layout);
                    Mimalloc.dealloc(z, layout);
                }
            }
        }
    }
}
