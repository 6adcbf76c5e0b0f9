//! The CUDA driver API, loaded at run time (`libcuda.so.1` / `nvcuda.dll`): the few calls
//! the smoke test needs, behind small owning wrappers. Thin on purpose; everything that
//! can be decided without a GPU lives in `reference`.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::Arc;

use serde::Serialize;

use crate::loader::{self, LoadFailure};
use crate::os::Os;
use crate::reference::decode_cuda_version;
use crate::version::{ComputeCapability, Version};

type CuResult = c_int;
type CuDevice = c_int;
pub type DevicePtr = u64;
type Handle = *mut c_void;

api! {
    /// Driver API entry points (the `_v2` names are what `cuda.h` maps the plain ones to).
    DriverApi {
        cuInit: fn(c_uint) -> CuResult;
        cuDriverGetVersion: fn(*mut c_int) -> CuResult;
        cuDeviceGetCount: fn(*mut c_int) -> CuResult;
        cuDeviceGet: fn(*mut CuDevice, c_int) -> CuResult;
        cuDeviceGetName: fn(*mut c_char, c_int, CuDevice) -> CuResult;
        cuDeviceGetAttribute: fn(*mut c_int, c_int, CuDevice) -> CuResult;
        cuDeviceTotalMem_v2: fn(*mut usize, CuDevice) -> CuResult;
        cuDevicePrimaryCtxRetain: fn(*mut Handle, CuDevice) -> CuResult;
        cuCtxSetCurrent: fn(Handle) -> CuResult;
        cuCtxSynchronize: fn() -> CuResult;
        cuMemGetInfo_v2: fn(*mut usize, *mut usize) -> CuResult;
        cuMemAlloc_v2: fn(*mut DevicePtr, usize) -> CuResult;
        cuMemFree_v2: fn(DevicePtr) -> CuResult;
        cuMemcpyHtoD_v2: fn(DevicePtr, *const c_void, usize) -> CuResult;
        cuMemcpyDtoH_v2: fn(*mut c_void, DevicePtr, usize) -> CuResult;
        cuMemHostAlloc: fn(*mut Handle, usize, c_uint) -> CuResult;
        cuMemFreeHost: fn(Handle) -> CuResult;
        cuEventCreate: fn(*mut Handle, c_uint) -> CuResult;
        cuEventRecord: fn(Handle, Handle) -> CuResult;
        cuEventSynchronize: fn(Handle) -> CuResult;
        cuEventElapsedTime: fn(*mut f32, Handle, Handle) -> CuResult;
        cuEventDestroy_v2: fn(Handle) -> CuResult;
        cuGetErrorName: fn(CuResult, *mut *const c_char) -> CuResult;
        cuGetErrorString: fn(CuResult, *mut *const c_char) -> CuResult;
    }
}

pub const CUDA_ERROR_NO_DEVICE: i32 = 100;
pub const CUDA_ERROR_STUB_LIBRARY: i32 = 34;

const ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
const ATTR_PCI_BUS_ID: c_int = 33;
const ATTR_PCI_DEVICE_ID: c_int = 34;
const ATTR_PCI_DOMAIN_ID: c_int = 50;
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;

/// The driver library's name on this OS.
pub fn driver_library(os: Os) -> &'static str {
    match os {
        Os::Windows => "nvcuda.dll",
        Os::Linux => "libcuda.so.1",
    }
}

/// A driver call that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{call} failed: {name} ({text})")]
pub struct CudaError {
    pub call: &'static str,
    pub code: i32,
    /// `CUDA_ERROR_NO_DEVICE`
    pub name: String,
    /// `no CUDA-capable device is detected`
    pub text: String,
}

/// Why the driver is unusable.
#[derive(Debug, Clone)]
pub enum DriverFailure {
    /// The library is not there (no driver installed).
    NotLoaded(LoadFailure),
    /// The library loaded but lacks a function this program needs (a very old driver).
    Incomplete { library: String, detail: String },
    /// `cuInit` or a device query failed.
    Call(CudaError),
}

/// The loaded driver.
#[derive(Clone)]
pub struct Driver {
    api: Arc<DriverApi>,
    pub library: &'static str,
    /// The highest CUDA version it runs (`cuDriverGetVersion`).
    pub cuda_version: Version,
}

impl Driver {
    /// Loads the driver and initialises CUDA.
    pub fn load(os: Os) -> Result<Driver, DriverFailure> {
        let name = driver_library(os);
        let lib = loader::open_system(name).map_err(DriverFailure::NotLoaded)?;
        let api = DriverApi::from_library(lib, Vec::new()).map_err(|detail| {
            DriverFailure::Incomplete {
                library: name.to_string(),
                detail,
            }
        })?;
        let mut d = Driver {
            api: Arc::new(api),
            library: name,
            cuda_version: Version::new(&[0, 0]),
        };
        // SAFETY: plain C calls with valid out-pointers.
        d.check("cuInit", unsafe { (d.api.cuInit)(0) })
            .map_err(DriverFailure::Call)?;
        let mut v = 0;
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        d.check("cuDriverGetVersion", unsafe {
            (d.api.cuDriverGetVersion)(&mut v)
        })
        .map_err(DriverFailure::Call)?;
        d.cuda_version = decode_cuda_version(v);
        Ok(d)
    }

    fn c_text(
        &self,
        f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
        code: i32,
    ) -> Option<String> {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the driver returns a static NUL-terminated string (or an error).
        unsafe {
            if f(code, &mut p) != 0 || p.is_null() {
                return None;
            }
            Some(CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }

    pub fn check(&self, call: &'static str, code: CuResult) -> Result<(), CudaError> {
        if code == 0 {
            return Ok(());
        }
        Err(CudaError {
            call,
            code,
            name: self
                .c_text(self.api.cuGetErrorName, code)
                .unwrap_or_else(|| format!("CUresult {code}")),
            text: self
                .c_text(self.api.cuGetErrorString, code)
                .unwrap_or_else(|| "unknown error".into()),
        })
    }

    pub fn device_count(&self) -> Result<usize, CudaError> {
        let mut n = 0;
        // SAFETY: valid out-pointer.
        self.check("cuDeviceGetCount", unsafe {
            (self.api.cuDeviceGetCount)(&mut n)
        })?;
        Ok(n.max(0) as usize)
    }

    /// Opens device `index` and makes its primary context current on this thread.
    pub fn open_device(&self, index: usize) -> Result<Device, CudaError> {
        let api = &self.api;
        let mut dev: CuDevice = 0;
        // SAFETY: valid out-pointers and sizes throughout.
        self.check("cuDeviceGet", unsafe {
            (api.cuDeviceGet)(&mut dev, index as c_int)
        })?;
        let mut name = [0 as c_char; 256];
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        self.check("cuDeviceGetName", unsafe {
            (api.cuDeviceGetName)(name.as_mut_ptr(), name.len() as c_int, dev)
        })?;
        // SAFETY: NUL-terminated within the buffer (the driver truncates).
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let attr = |a: c_int, call: &'static str| -> Result<i32, CudaError> {
            let mut v = 0;
            // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
            self.check(call, unsafe { (api.cuDeviceGetAttribute)(&mut v, a, dev) })?;
            Ok(v)
        };
        let cc = ComputeCapability::new(
            attr(ATTR_CC_MAJOR, "cuDeviceGetAttribute")? as u32,
            attr(ATTR_CC_MINOR, "cuDeviceGetAttribute")? as u32,
        );
        let sms = attr(ATTR_MULTIPROCESSOR_COUNT, "cuDeviceGetAttribute")? as u32;
        let pci = format!(
            "{:04x}:{:02x}:{:02x}.0",
            attr(ATTR_PCI_DOMAIN_ID, "cuDeviceGetAttribute")?,
            attr(ATTR_PCI_BUS_ID, "cuDeviceGetAttribute")?,
            attr(ATTR_PCI_DEVICE_ID, "cuDeviceGetAttribute")?
        );
        let mut total = 0usize;
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        self.check("cuDeviceTotalMem", unsafe {
            (api.cuDeviceTotalMem_v2)(&mut total, dev)
        })?;
        let mut ctx: Handle = std::ptr::null_mut();
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        self.check("cuDevicePrimaryCtxRetain", unsafe {
            (api.cuDevicePrimaryCtxRetain)(&mut ctx, dev)
        })?;
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        self.check("cuCtxSetCurrent", unsafe { (api.cuCtxSetCurrent)(ctx) })?;
        Ok(Device {
            driver: self.clone(),
            info: DeviceInfo {
                index,
                name,
                compute_capability: cc,
                multiprocessors: sms,
                memory_total_bytes: total as u64,
                pci_bus_id: pci,
            },
        })
    }
}

/// What the smoke report says about the GPU it ran on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceInfo {
    pub index: usize,
    pub name: String,
    pub compute_capability: ComputeCapability,
    pub multiprocessors: u32,
    pub memory_total_bytes: u64,
    pub pci_bus_id: String,
}

/// An open device whose context is current on the thread that opened it.
pub struct Device {
    pub driver: Driver,
    pub info: DeviceInfo,
}

impl Device {
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: no arguments.
        self.driver.check("cuCtxSynchronize", unsafe {
            (self.driver.api.cuCtxSynchronize)()
        })
    }

    /// (free, total) device memory in bytes.
    pub fn memory(&self) -> Result<(u64, u64), CudaError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        self.driver.check("cuMemGetInfo", unsafe {
            (self.driver.api.cuMemGetInfo_v2)(&mut free, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer, CudaError> {
        let mut ptr: DevicePtr = 0;
        // SAFETY: valid out-pointer.
        self.driver.check("cuMemAlloc", unsafe {
            (self.driver.api.cuMemAlloc_v2)(&mut ptr, bytes.max(1))
        })?;
        Ok(DeviceBuffer {
            driver: self.driver.clone(),
            ptr,
            bytes,
        })
    }

    /// Page-locked ("pinned") host memory: what `pin_memory=True` gives a DataLoader.
    pub fn alloc_pinned(&self, bytes: usize) -> Result<PinnedBuffer, CudaError> {
        let mut ptr: Handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.driver.check("cuMemHostAlloc", unsafe {
            (self.driver.api.cuMemHostAlloc)(&mut ptr, bytes.max(1), 0)
        })?;
        Ok(PinnedBuffer {
            driver: self.driver.clone(),
            ptr,
            bytes,
        })
    }

    pub fn event(&self) -> Result<Event, CudaError> {
        let mut e: Handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        self.driver.check("cuEventCreate", unsafe {
            (self.driver.api.cuEventCreate)(&mut e, 0)
        })?;
        Ok(Event {
            driver: self.driver.clone(),
            raw: e,
        })
    }

    /// Milliseconds between two events recorded on the default stream around `work`.
    pub fn time<E: From<CudaError>>(&self, work: impl FnOnce() -> Result<(), E>) -> Result<f64, E> {
        let (start, stop) = (self.event()?, self.event()?);
        start.record()?;
        work()?;
        stop.record()?;
        Ok(stop.elapsed_since(&start)?)
    }
}

/// Device memory, freed on drop.
pub struct DeviceBuffer {
    driver: Driver,
    pub ptr: DevicePtr,
    pub bytes: usize,
}

impl DeviceBuffer {
    /// Copies `src` (host memory of any kind, pageable or pinned) to the start of the
    /// buffer.
    pub fn upload<T: Copy>(&mut self, src: &[T]) -> Result<(), CudaError> {
        let bytes = std::mem::size_of_val(src);
        assert!(
            bytes <= self.bytes,
            "upload past the end of a device buffer"
        );
        // SAFETY: `src` holds `bytes` readable bytes; the buffer holds at least as many.
        self.driver.check("cuMemcpyHtoD", unsafe {
            (self.driver.api.cuMemcpyHtoD_v2)(self.ptr, src.as_ptr().cast(), bytes)
        })
    }

    /// Copies the start of the buffer into `dst`.
    pub fn download<T: Copy>(&self, dst: &mut [T]) -> Result<(), CudaError> {
        let bytes = std::mem::size_of_val(dst);
        assert!(
            bytes <= self.bytes,
            "download past the end of a device buffer"
        );
        // SAFETY: `dst` holds `bytes` writable bytes.
        self.driver.check("cuMemcpyDtoH", unsafe {
            (self.driver.api.cuMemcpyDtoH_v2)(dst.as_mut_ptr().cast(), self.ptr, bytes)
        })
    }

    /// The device address as the pointer type cuBLAS / cuDNN take.
    pub fn as_ptr<T>(&self) -> *mut T {
        self.ptr as usize as *mut T
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        unsafe { (self.driver.api.cuMemFree_v2)(self.ptr) };
    }
}

/// Pinned host memory, freed on drop.
pub struct PinnedBuffer {
    driver: Driver,
    ptr: Handle,
    pub bytes: usize,
}

impl PinnedBuffer {
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `bytes` bytes allocated by cuMemHostAlloc, owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast(), self.bytes) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        unsafe { (self.driver.api.cuMemFreeHost)(self.ptr) };
    }
}

pub struct Event {
    driver: Driver,
    raw: Handle,
}

impl Event {
    /// Records on the legacy default stream (where cuBLAS and cuDNN work by default).
    pub fn record(&self) -> Result<(), CudaError> {
        // SAFETY: a live event; null is the default stream.
        self.driver.check("cuEventRecord", unsafe {
            (self.driver.api.cuEventRecord)(self.raw, std::ptr::null_mut())
        })
    }

    /// Waits for this event, then the milliseconds since `start`.
    pub fn elapsed_since(&self, start: &Event) -> Result<f64, CudaError> {
        let api = &self.driver.api;
        // SAFETY: live events, valid out-pointer.
        self.driver.check("cuEventSynchronize", unsafe {
            (api.cuEventSynchronize)(self.raw)
        })?;
        let mut ms = 0f32;
        // SAFETY: a C call through a pointer typed from cuda.h, with valid out-pointers.
        self.driver.check("cuEventElapsedTime", unsafe {
            (api.cuEventElapsedTime)(&mut ms, start.raw, self.raw)
        })?;
        Ok(f64::from(ms))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        unsafe { (self.driver.api.cuEventDestroy_v2)(self.raw) };
    }
}
