//! C libraries opened at run time with `dlopen` (ODE's and MuJoCo's): neither is linked when
//! the benchmark is built, so it builds and runs where either is missing.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

/// A C pointer as the libraries' interfaces pass it.
pub type Ptr = *mut c_void;

const RTLD_NOW: c_int = 2;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> Ptr;
    fn dlsym(handle: Ptr, symbol: *const c_char) -> Ptr;
    fn dlerror() -> *const c_char;
}

/// Opens the first of `names` (names the loader searches its path for, or paths) that loads,
/// for the life of the process: its handle and name, or the loader's reasons why none did.
pub fn open_first(names: impl IntoIterator<Item = String>) -> Result<(Ptr, String), Vec<String>> {
    let mut why = Vec::new();
    for name in names {
        let Ok(c) = CString::new(name.clone()) else {
            continue;
        };
        // SAFETY: a NUL-terminated name; loading runs the library's initialisers (for libode
        // and libmujoco: their allocators and plugin tables).
        let handle = unsafe { dlopen(c.as_ptr(), RTLD_NOW) };
        if !handle.is_null() {
            return Ok((handle, name));
        }
        // SAFETY: dlerror returns a NUL-terminated message or null.
        let e = unsafe { dlerror() };
        if !e.is_null() {
            // SAFETY: see above.
            why.push(unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned());
        }
    }
    Err(why)
}

/// The address of the function `name` (NUL-terminated) in the library `handle`.
///
/// # Safety
/// `handle` is a live handle from [`open_first`].
pub unsafe fn symbol(handle: Ptr, name: &'static str) -> Option<Ptr> {
    debug_assert!(name.ends_with('\0'));
    // SAFETY: a live handle (the caller's promise) and a NUL-terminated name.
    let p = unsafe { dlsym(handle, name.as_ptr() as *const c_char) };
    (!p.is_null()).then_some(p)
}

/// Declares a struct of a C library's functions (each a field named as the C function, with
/// its C signature), any other public fields after them, and `resolve`, which looks every
/// function up in an open library (and takes the other fields' values).
macro_rules! c_api {
    (
        $(#[$meta:meta])*
        pub struct $api:ident ($lib:literal) {
            $($(#[$emeta:meta])* pub $extra:ident : $ety:ty,)*
        }
        $($name:ident : fn($($arg:ty),*) $(-> $ret:ty)?;)*
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub struct $api {
            $($name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            $($(#[$emeta])* pub $extra: $ety,)*
        }

        impl $api {
            /// # Safety
            /// `handle` is a live handle (from [`crate::dynlib::open_first`]) of a library in
            /// which each function of this struct has the C signature declared here.
            unsafe fn resolve(handle: $crate::dynlib::Ptr $(, $extra: $ety)*) -> Result<$api, String> {
                Ok($api {
                    $($name: {
                        // SAFETY: a live handle (the caller's promise).
                        let p = unsafe {
                            $crate::dynlib::symbol(handle, concat!(stringify!($name), "\0"))
                        }
                        .ok_or_else(|| format!("{} has no {}", $lib, stringify!($name)))?;
                        // SAFETY: the symbol has this C signature (the caller's promise).
                        unsafe {
                            std::mem::transmute::<
                                $crate::dynlib::Ptr,
                                unsafe extern "C" fn($($arg),*) $(-> $ret)?,
                            >(p)
                        }
                    },)*
                    $($extra,)*
                })
            }
        }
    };
}

pub(crate) use c_api;
