//! `deep_copy`: a copy of a `VkInstanceCreateInfo` outlives everything the application passed.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use vk_generated::deep_copy::{DeepCopy, CHAIN_STRUCTURE_TYPES};
use vk_generated::types::*;

/// A messenger callback that is never called: its address is what the copy must keep.
///
/// # Safety
/// None: it reads none of its arguments.
unsafe extern "system" fn callback(
    _: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    _: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut c_void,
) -> VkBool32 {
    0
}

/// Everything an application's create info is made of, each in a buffer of its own, with the
/// address range of every buffer, so the test can overwrite them and tell whether a copied
/// pointer points into one.
struct Original {
    strings: Vec<CString>,
    name_arrays: Vec<Vec<*const c_char>>,
    app: Box<VkApplicationInfo>,
    messenger: Box<VkDebugUtilsMessengerCreateInfoEXT>,
    enables: Vec<VkValidationFeatureEnableEXT>,
    disables: Vec<VkValidationFeatureDisableEXT>,
    features: Box<VkValidationFeaturesEXT>,
    bools: Vec<VkBool32>,
    settings: Vec<VkLayerSettingEXT>,
    layer_settings: Box<VkLayerSettingsCreateInfoEXT>,
    info: Box<VkInstanceCreateInfo>,
}

const USER_DATA: *mut c_void = 0x1234 as *mut c_void;

impl Original {
    fn new() -> Original {
        let strings: Vec<CString> = [
            "app",
            "engine",
            "VK_EXT_debug_utils",
            "VK_EXT_layer_settings",
            "VK_LAYER_KHRONOS_validation",
            "log_filename",
            "stdout.txt",
            "validate_core",
        ]
        .iter()
        .map(|s| CString::new(*s).unwrap())
        .collect();
        let s = |i: usize| strings[i].as_ptr();
        let name_arrays = vec![vec![s(2), s(3)], vec![s(6)]];

        let app = Box::new(VkApplicationInfo {
            pApplicationName: s(0),
            applicationVersion: 7,
            pEngineName: s(1),
            engineVersion: 9,
            apiVersion: vk_generated::make_api_version(0, 1, 3, 0),
            ..Default::default()
        });
        let mut messenger = Box::new(VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
            messageType: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT,
            pfnUserCallback: Some(callback),
            pUserData: USER_DATA,
            ..Default::default()
        });
        let enables = vec![VkValidationFeatureEnableEXT::BEST_PRACTICES_EXT, VkValidationFeatureEnableEXT::GPU_ASSISTED_EXT];
        let disables = vec![VkValidationFeatureDisableEXT::THREAD_SAFETY_EXT];
        let mut features = Box::new(VkValidationFeaturesEXT {
            enabledValidationFeatureCount: 2,
            pEnabledValidationFeatures: enables.as_ptr(),
            disabledValidationFeatureCount: 1,
            pDisabledValidationFeatures: disables.as_ptr(),
            ..Default::default()
        });
        let bools: Vec<VkBool32> = vec![1, 0];
        let settings = vec![
            VkLayerSettingEXT {
                pLayerName: s(4),
                pSettingName: s(5),
                r#type: VkLayerSettingTypeEXT::STRING_EXT,
                valueCount: 1,
                pValues: name_arrays[1].as_ptr().cast(),
            },
            VkLayerSettingEXT {
                pLayerName: s(4),
                pSettingName: s(7),
                r#type: VkLayerSettingTypeEXT::BOOL32_EXT,
                valueCount: 2,
                pValues: bools.as_ptr().cast(),
            },
        ];
        let layer_settings = Box::new(VkLayerSettingsCreateInfoEXT {
            settingCount: 2,
            pSettings: settings.as_ptr(),
            ..Default::default()
        });
        features.pNext = ptr::from_ref(&*layer_settings).cast();
        messenger.pNext = ptr::from_ref(&*features).cast();
        let info = Box::new(VkInstanceCreateInfo {
            pNext: ptr::from_ref(&*messenger).cast(),
            pApplicationInfo: &*app,
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: name_arrays[0].as_ptr(),
            ..Default::default()
        });
        Original { strings, name_arrays, app, messenger, enables, disables, features, bools, settings, layer_settings, info }
    }

    /// The address range of every buffer.
    fn ranges(&self) -> Vec<(usize, usize)> {
        fn range<T>(p: *const T, count: usize) -> (usize, usize) {
            (p as usize, p as usize + count * size_of::<T>())
        }
        let mut out: Vec<(usize, usize)> =
            self.strings.iter().map(|s| range(s.as_ptr(), s.as_bytes_with_nul().len())).collect();
        out.extend(self.name_arrays.iter().map(|a| range(a.as_ptr(), a.len())));
        out.push(range(&*self.app, 1));
        out.push(range(&*self.messenger, 1));
        out.push(range(self.enables.as_ptr(), self.enables.len()));
        out.push(range(self.disables.as_ptr(), self.disables.len()));
        out.push(range(&*self.features, 1));
        out.push(range(self.bools.as_ptr(), self.bools.len()));
        out.push(range(self.settings.as_ptr(), self.settings.len()));
        out.push(range(&*self.layer_settings, 1));
        out.push(range(&*self.info, 1));
        out
    }

    /// Overwrites every buffer with garbage, then frees it.
    fn trash(mut self) {
        /// Overwrites `value` with 0xA5 bytes. Only for the C structures and arrays here: integers,
        /// raw pointers and function pointers, for which any non-zero bytes are a valid value.
        fn fill<T>(value: &mut T) {
            // SAFETY: `value` is a unique reference, so its `size_of::<T>()` bytes are ours to
            // write; what they then hold is a valid `T` (see above).
            unsafe { ptr::write_bytes(ptr::from_mut(value).cast::<u8>(), 0xA5, size_of::<T>()) }
        }
        for s in std::mem::take(&mut self.strings) {
            let len = s.as_bytes().len();
            let bytes = s.into_raw();
            // SAFETY: `bytes` is the string's own buffer, `len` bytes before its NUL, which stays:
            // `from_raw` takes the buffer back whole and frees it.
            unsafe {
                ptr::write_bytes(bytes.cast::<u8>(), b'#', len);
                drop(CString::from_raw(bytes));
            }
        }
        self.name_arrays.iter_mut().flatten().for_each(fill);
        fill(&mut *self.app);
        fill(&mut *self.messenger);
        self.enables.iter_mut().for_each(fill);
        self.disables.iter_mut().for_each(fill);
        fill(&mut *self.features);
        self.bools.iter_mut().for_each(fill);
        self.settings.iter_mut().for_each(fill);
        fill(&mut *self.layer_settings);
        fill(&mut *self.info);
    }
}

/// Checks that `p` points outside every original buffer.
fn outside<T>(ranges: &[(usize, usize)], p: *const T) -> *const T {
    assert!(!p.is_null());
    let a = p as usize;
    assert!(!ranges.iter().any(|&(start, end)| (start..end).contains(&a)), "{p:?} points into an original");
    p
}

/// The UTF-8 string at `p`, checked to lie outside every original buffer.
///
/// # Safety
/// `p` is a NUL-terminated string that lives and stays unchanged for `'a`.
unsafe fn text<'a>(ranges: &[(usize, usize)], p: *const c_char) -> &'a str {
    // SAFETY: the contract.
    unsafe { CStr::from_ptr(outside(ranges, p)) }.to_str().unwrap()
}

#[test]
fn copy_outlives_the_application_buffers() {
    let original = Original::new();
    let ranges = original.ranges();
    let mut copies = DeepCopy::new();
    // SAFETY: `original.info` and everything it points to are valid until `trash`, after the copy.
    let copy = unsafe { copies.instance_create_info(&*original.info) }.unwrap();
    original.trash();

    // SAFETY: the copy and everything it points to belong to `copies`, alive to the end; each
    // pointer is checked outside the trashed originals before it is followed, and is valid for the
    // count asserted just before (the original's).
    unsafe {
        let info = &*outside(&ranges, copy);
        assert_eq!(info.sType, VkStructureType::INSTANCE_CREATE_INFO);
        assert_eq!(info.enabledLayerCount, 0);
        assert!(info.ppEnabledLayerNames.is_null());
        assert_eq!(info.enabledExtensionCount, 2);
        let names = outside(&ranges, info.ppEnabledExtensionNames);
        assert_eq!(text(&ranges, *names), "VK_EXT_debug_utils");
        assert_eq!(text(&ranges, *names.add(1)), "VK_EXT_layer_settings");

        let app = &*outside(&ranges, info.pApplicationInfo);
        assert_eq!(app.sType, VkStructureType::APPLICATION_INFO);
        assert!(app.pNext.is_null());
        assert_eq!(text(&ranges, app.pApplicationName), "app");
        assert_eq!(text(&ranges, app.pEngineName), "engine");
        assert_eq!((app.applicationVersion, app.engineVersion), (7, 9));
        assert_eq!(app.apiVersion, vk_generated::make_api_version(0, 1, 3, 0));

        let messenger = &*outside(&ranges, info.pNext.cast::<VkDebugUtilsMessengerCreateInfoEXT>());
        assert_eq!(messenger.sType, VkStructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
        assert_eq!(messenger.messageSeverity, VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT);
        assert_eq!(messenger.messageType, VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT);
        let expected: PFN_vkDebugUtilsMessengerCallbackEXT = Some(callback);
        assert_eq!(messenger.pfnUserCallback.map(|f| f as usize), expected.map(|f| f as usize));
        assert_eq!(messenger.pUserData, USER_DATA, "pUserData is copied as a value");

        let features = &*outside(&ranges, messenger.pNext.cast::<VkValidationFeaturesEXT>());
        assert_eq!(features.sType, VkStructureType::VALIDATION_FEATURES_EXT);
        assert_eq!(features.enabledValidationFeatureCount, 2);
        let enables = std::slice::from_raw_parts(outside(&ranges, features.pEnabledValidationFeatures), 2);
        assert_eq!(enables, [VkValidationFeatureEnableEXT::BEST_PRACTICES_EXT, VkValidationFeatureEnableEXT::GPU_ASSISTED_EXT]);
        assert_eq!(features.disabledValidationFeatureCount, 1);
        assert_eq!(*outside(&ranges, features.pDisabledValidationFeatures), VkValidationFeatureDisableEXT::THREAD_SAFETY_EXT);

        let layer_settings = &*outside(&ranges, features.pNext.cast::<VkLayerSettingsCreateInfoEXT>());
        assert_eq!(layer_settings.sType, VkStructureType::LAYER_SETTINGS_CREATE_INFO_EXT);
        assert!(layer_settings.pNext.is_null(), "the chain ends where the original did");
        assert_eq!(layer_settings.settingCount, 2);
        let settings = std::slice::from_raw_parts(outside(&ranges, layer_settings.pSettings), 2);
        assert_eq!(text(&ranges, settings[0].pLayerName), "VK_LAYER_KHRONOS_validation");
        assert_eq!(text(&ranges, settings[0].pSettingName), "log_filename");
        assert_eq!(settings[0].r#type, VkLayerSettingTypeEXT::STRING_EXT);
        assert_eq!(settings[0].valueCount, 1);
        let values = outside(&ranges, settings[0].pValues.cast::<*const c_char>());
        assert_eq!(text(&ranges, *values), "stdout.txt");
        assert_eq!(text(&ranges, settings[1].pLayerName), "VK_LAYER_KHRONOS_validation");
        assert_eq!(text(&ranges, settings[1].pSettingName), "validate_core");
        assert_eq!(settings[1].r#type, VkLayerSettingTypeEXT::BOOL32_EXT);
        assert_eq!(settings[1].valueCount, 2);
        let bools = std::slice::from_raw_parts(outside(&ranges, settings[1].pValues.cast::<VkBool32>()), 2);
        assert_eq!(bools, [1, 0]);
    }
    drop(copies);
}

#[test]
fn the_same_chain_copied_bare() {
    let original = Original::new();
    let ranges = original.ranges();
    let mut copies = DeepCopy::new();
    // SAFETY: the chain is `original`'s, valid until `trash`, after the copy.
    let chain = unsafe { copies.chain(original.info.pNext) }.unwrap();
    original.trash();
    // SAFETY: the copied chain belongs to `copies`, alive to the end, NULL-terminated; each
    // structure is checked outside the trashed originals before it is read.
    unsafe {
        let mut stypes = Vec::new();
        let mut next = chain.cast::<VkBaseInStructure>();
        while !next.is_null() {
            stypes.push((*outside(&ranges, next)).sType);
            next = (*next).pNext;
        }
        assert_eq!(
            stypes,
            [
                VkStructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
                VkStructureType::VALIDATION_FEATURES_EXT,
                VkStructureType::LAYER_SETTINGS_CREATE_INFO_EXT
            ]
        );
    }
}

#[test]
fn null_gives_null() {
    let mut copies = DeepCopy::new();
    // SAFETY: NULL is a valid (empty) chain and create info.
    assert_eq!(unsafe { copies.chain(ptr::null()) }, Ok(ptr::null()));
    // SAFETY: as above.
    assert_eq!(unsafe { copies.instance_create_info(ptr::null()) }, Ok(ptr::null()));
    let info = VkInstanceCreateInfo::default();
    // SAFETY: `info` is a valid create info that points to nothing, on this frame for the call;
    // the copy it returns belongs to `copies`, alive to the end.
    let copy = unsafe { &*copies.instance_create_info(&info).unwrap() };
    assert!(copy.pNext.is_null() && copy.pApplicationInfo.is_null() && copy.ppEnabledExtensionNames.is_null());
}

#[test]
fn an_unknown_stype_is_named() {
    let original = Original::new();
    // The loader's own layer-link structure, which it strips before copying, in the middle.
    let loader_link = VkBaseInStructure {
        sType: VkStructureType::LOADER_INSTANCE_CREATE_INFO,
        pNext: original.features.pNext.cast(),
    };
    let mut features = *original.features;
    features.pNext = ptr::from_ref(&loader_link).cast();
    let mut messenger = *original.messenger;
    messenger.pNext = ptr::from_ref(&features).cast();
    let mut info = *original.info;
    info.pNext = ptr::from_ref(&messenger).cast();

    let mut copies = DeepCopy::new();
    // SAFETY: `info` and its chain are locals or `original`'s buffers, alive for both calls.
    assert_eq!(unsafe { copies.instance_create_info(&info) }, Err(VkStructureType::LOADER_INSTANCE_CREATE_INFO));
    // SAFETY: as above.
    assert_eq!(unsafe { copies.chain(info.pNext) }, Err(VkStructureType::LOADER_INSTANCE_CREATE_INFO));
    assert!(!CHAIN_STRUCTURE_TYPES.contains(&VkStructureType::LOADER_INSTANCE_CREATE_INFO));

    // A structure this registry does not know at all, in the application info's chain.
    let unknown = VkBaseInStructure { sType: VkStructureType(0x7fff_0001), pNext: ptr::null() };
    let mut app = *original.app;
    app.pNext = ptr::from_ref(&unknown).cast();
    let mut info = *original.info;
    info.pApplicationInfo = &app;
    // SAFETY: `info` and what it points to are locals or `original`'s buffers, alive for the call.
    assert_eq!(unsafe { copies.instance_create_info(&info) }, Err(VkStructureType(0x7fff_0001)));
}

#[test]
fn a_layer_setting_of_unknown_type_names_its_structure() {
    let original = Original::new();
    let mut settings = original.settings.clone();
    settings[1].r#type = VkLayerSettingTypeEXT(99);
    let mut layer_settings = *original.layer_settings;
    layer_settings.pSettings = settings.as_ptr();
    let mut copies = DeepCopy::new();
    assert_eq!(
        // SAFETY: `layer_settings` is a local and its settings `original`'s, alive for the call.
        unsafe { copies.chain(ptr::from_ref(&layer_settings).cast()) },
        Err(VkStructureType::LAYER_SETTINGS_CREATE_INFO_EXT)
    );
}
