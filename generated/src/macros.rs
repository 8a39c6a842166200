//! Small macros the generated `types.rs` uses, so each item is one line there.

macro_rules! dispatchable_handle {
    ($name:ident, $doc:literal) => {
        #[doc = $doc]
        /// A dispatchable handle: a pointer whose first word is the loader's dispatch table.
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(pub *mut core::ffi::c_void);
        impl $name {
            /// `VK_NULL_HANDLE`.
            pub const NULL: Self = Self(core::ptr::null_mut());
            /// Whether this is `VK_NULL_HANDLE`.
            pub fn is_null(self) -> bool {
                self.0.is_null()
            }
        }
        impl Default for $name {
            fn default() -> Self {
                Self::NULL
            }
        }
        // SAFETY: a handle is a plain value, never dereferenced by this crate; Vulkan's external
        // synchronisation rules govern its use.
        unsafe impl Send for $name {}
        // SAFETY: as for `Send`.
        unsafe impl Sync for $name {}
    };
}

macro_rules! non_dispatchable_handle {
    ($name:ident, $doc:literal) => {
        #[doc = $doc]
        /// A non-dispatchable handle: a 64-bit value owned by the driver.
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
        pub struct $name(pub u64);
        impl $name {
            /// `VK_NULL_HANDLE`.
            pub const NULL: Self = Self(0);
            /// Whether this is `VK_NULL_HANDLE`.
            pub fn is_null(self) -> bool {
                self.0 == 0
            }
        }
    };
}

macro_rules! bitmask_ops {
    ($name:ident, $repr:ty) => {
        impl $name {
            /// No bit set.
            pub const fn empty() -> Self {
                Self(0)
            }
            /// Whether every bit of `other` is set in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
            /// Whether `self` and `other` have a bit in common.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }
        }
        impl core::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }
        impl core::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: Self) {
                self.0 |= rhs.0
            }
        }
        impl core::ops::BitAnd for $name {
            type Output = Self;
            fn bitand(self, rhs: Self) -> Self {
                Self(self.0 & rhs.0)
            }
        }
        impl core::ops::Not for $name {
            type Output = Self;
            fn not(self) -> Self {
                Self(!self.0)
            }
        }
    };
}

macro_rules! enum_debug {
    ($name:ident) => {
        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

macro_rules! zeroed_default {
    ($name:ident) => {
        impl Default for $name {
            fn default() -> Self {
                // SAFETY: C structs of integers, floats, pointers and `Option<fn>`: all-zero is valid.
                unsafe { core::mem::zeroed() }
            }
        }
    };
}

macro_rules! tagged_struct {
    ($name:ident, $stype:expr) => {
        impl Default for $name {
            fn default() -> Self {
                // SAFETY: as in `zeroed_default!`; then the structure type is set.
                let mut value: Self = unsafe { core::mem::zeroed() };
                value.sType = $stype;
                value
            }
        }
        // SAFETY: `#[repr(C)]` with `sType` first, and `$stype` is its structure type (the registry's).
        unsafe impl crate::TaggedStruct for $name {
            const STRUCTURE_TYPE: crate::types::VkStructureType = $stype;
        }
    };
}
