//! cuDNN's own calls: its function table, its version, and a small convolution forward
//! on the GPU, checked against the CPU reference. Which cuDNN to load, and what its
//! companions are, is the engine's `verify::cudnn`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::Path;

use serde::Serialize;

use crate::cuda::{CudaError, Device};
use crate::loader::LoadFailure;
use crate::reference::{self, Accuracy, CONV_TOLERANCE, ConvShape, decode_cuda_version};
use crate::version::Version;

type Handle = *mut c_void;

api! {
    CudnnApi {
        cudnnGetVersion: fn() -> usize;
        cudnnGetCudartVersion: fn() -> usize;
        cudnnGetErrorString: fn(c_int) -> *const c_char;
        cudnnCreate: fn(*mut Handle) -> c_int;
        cudnnDestroy: fn(Handle) -> c_int;
        cudnnCreateTensorDescriptor: fn(*mut Handle) -> c_int;
        cudnnSetTensor4dDescriptor: fn(Handle, c_int, c_int, c_int, c_int, c_int, c_int) -> c_int;
        cudnnDestroyTensorDescriptor: fn(Handle) -> c_int;
        cudnnCreateFilterDescriptor: fn(*mut Handle) -> c_int;
        cudnnSetFilter4dDescriptor: fn(Handle, c_int, c_int, c_int, c_int, c_int, c_int) -> c_int;
        cudnnDestroyFilterDescriptor: fn(Handle) -> c_int;
        cudnnCreateConvolutionDescriptor: fn(*mut Handle) -> c_int;
        cudnnSetConvolution2dDescriptor: fn(
            Handle, c_int, c_int, c_int, c_int, c_int, c_int, c_int, c_int,
        ) -> c_int;
        cudnnDestroyConvolutionDescriptor: fn(Handle) -> c_int;
        cudnnGetConvolution2dForwardOutputDim: fn(
            Handle, Handle, Handle, *mut c_int, *mut c_int, *mut c_int, *mut c_int,
        ) -> c_int;
        cudnnConvolutionForward: fn(
            Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle,
            c_int, *mut c_void, usize, *const c_void, Handle, *mut c_void,
        ) -> c_int;
    }
}

const TENSOR_NCHW: c_int = 0;
const DATA_FLOAT: c_int = 0;
const CROSS_CORRELATION: c_int = 1;
const FWD_ALGO_IMPLICIT_GEMM: c_int = 0;

#[derive(Debug, Clone, Serialize)]
pub struct ConvResult {
    pub shape: ConvShape,
    pub algorithm: &'static str,
    pub accuracy: Accuracy,
}

/// A loaded cuDNN: its function table (the library and its companions stay loaded as long
/// as it lives).
pub struct Cudnn {
    api: CudnnApi,
    /// `cudnnGetLastErrorString`: cuDNN 9 only.
    last_error: Option<unsafe extern "C" fn(*mut c_char, usize)>,
}

impl Cudnn {
    /// Looks cuDNN's functions up in `lib` (the main library at `main`); `keep` (its
    /// companions, cuBLAS) stays loaded with it.
    pub fn load(
        main: &Path,
        lib: libloading::Library,
        keep: Vec<libloading::Library>,
    ) -> Result<Cudnn, LoadFailure> {
        // Only cuDNN 9 has it; looked up before the table takes the library.
        // SAFETY: the signature from cudnn_graph.h: void cudnnGetLastErrorString(char*, size_t).
        let last_error: Option<unsafe extern "C" fn(*mut c_char, usize)> =
            unsafe { lib.get(b"cudnnGetLastErrorString\0") }
                .ok()
                .map(|s| *s);
        let api = CudnnApi::from_library(lib, keep).map_err(|detail| LoadFailure {
            library: main.display().to_string(),
            detail,
            missing: Vec::new(),
        })?;
        Ok(Cudnn { api, last_error })
    }

    /// `cudnnGetVersion()` (works without a GPU).
    pub fn version(&self) -> Version {
        // SAFETY: no arguments.
        reference::decode_cudnn_version(unsafe { (self.api.cudnnGetVersion)() } as u64)
    }

    /// The CUDA this build is for, `cudnnGetCudartVersion()` (works without a GPU).
    pub fn cudart_version(&self) -> Version {
        // SAFETY: no arguments.
        decode_cuda_version(unsafe { (self.api.cudnnGetCudartVersion)() } as i32)
    }

    /// A status in words, with cuDNN 9's last error when it has one.
    fn err_text(&self, status: c_int) -> String {
        // SAFETY: cuDNN returns a static string.
        let s = unsafe { (self.api.cudnnGetErrorString)(status) };
        let mut text = if s.is_null() {
            format!("status {status}")
        } else {
            // SAFETY: not null, NUL-terminated, static.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        if let Some(f) = self.last_error {
            let mut buf = [0 as c_char; 1024];
            // SAFETY: a buffer of the size passed.
            unsafe { f(buf.as_mut_ptr(), buf.len()) };
            // SAFETY: cuDNN NUL-terminates within the size it was given.
            let detail = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
            if !detail.trim().is_empty() {
                text = format!("{text}: {}", detail.trim());
            }
        }
        text
    }

    /// The smoke test's convolution forward on `dev`, checked against the CPU.
    pub fn convolution(&self, dev: &Device) -> Result<ConvResult, ConvError> {
        convolution(&self.api, dev, &|status| self.err_text(status))
    }
}

/// Why the convolution did not run.
pub enum ConvError {
    Cuda(CudaError),
    Cudnn { call: &'static str, text: String },
}

impl From<CudaError> for ConvError {
    fn from(e: CudaError) -> Self {
        ConvError::Cuda(e)
    }
}

/// Descriptors destroyed on drop, whichever way the function leaves.
struct Owned<'a>(
    Handle,
    unsafe extern "C" fn(Handle) -> c_int,
    std::marker::PhantomData<&'a ()>,
);

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: created by the matching cudnnCreate*.
            unsafe { (self.1)(self.0) };
        }
    }
}

fn convolution(
    api: &CudnnApi,
    dev: &Device,
    err_text: &dyn Fn(c_int) -> String,
) -> Result<ConvResult, ConvError> {
    let s = ConvShape::SMOKE;
    let ck = |call: &'static str, status: c_int| -> Result<(), ConvError> {
        if status == 0 {
            Ok(())
        } else {
            Err(ConvError::Cudnn {
                call,
                text: err_text(status),
            })
        }
    };
    let x = reference::test_matrix(s.input_len(), 11);
    let w = reference::test_matrix(s.filter_len(), 12);
    let mut dx = dev.alloc(x.len() * 4)?;
    let mut dw = dev.alloc(w.len() * 4)?;
    let dy = dev.alloc(s.output_len() * 4)?;
    dx.upload(&x)?;
    dw.upload(&w)?;

    let i = |v: usize| v as c_int;
    // SAFETY: cuDNN's documented calling sequence with valid out-pointers; every handle is
    // destroyed by its guard.
    unsafe {
        let mut h: Handle = std::ptr::null_mut();
        ck("cudnnCreate", (api.cudnnCreate)(&mut h))?;
        let _h = Owned(h, api.cudnnDestroy, Default::default());
        let mut xd: Handle = std::ptr::null_mut();
        ck(
            "cudnnCreateTensorDescriptor",
            (api.cudnnCreateTensorDescriptor)(&mut xd),
        )?;
        let _xd = Owned(xd, api.cudnnDestroyTensorDescriptor, Default::default());
        ck(
            "cudnnSetTensor4dDescriptor",
            (api.cudnnSetTensor4dDescriptor)(
                xd,
                TENSOR_NCHW,
                DATA_FLOAT,
                i(s.n),
                i(s.c),
                i(s.h),
                i(s.w),
            ),
        )?;
        let mut wd: Handle = std::ptr::null_mut();
        ck(
            "cudnnCreateFilterDescriptor",
            (api.cudnnCreateFilterDescriptor)(&mut wd),
        )?;
        let _wd = Owned(wd, api.cudnnDestroyFilterDescriptor, Default::default());
        ck(
            "cudnnSetFilter4dDescriptor",
            (api.cudnnSetFilter4dDescriptor)(
                wd,
                DATA_FLOAT,
                TENSOR_NCHW,
                i(s.k),
                i(s.c),
                i(s.r),
                i(s.s),
            ),
        )?;
        let mut cd: Handle = std::ptr::null_mut();
        ck(
            "cudnnCreateConvolutionDescriptor",
            (api.cudnnCreateConvolutionDescriptor)(&mut cd),
        )?;
        let _cd = Owned(
            cd,
            api.cudnnDestroyConvolutionDescriptor,
            Default::default(),
        );
        ck(
            "cudnnSetConvolution2dDescriptor",
            (api.cudnnSetConvolution2dDescriptor)(
                cd,
                i(s.pad),
                i(s.pad),
                i(s.stride),
                i(s.stride),
                1,
                1,
                CROSS_CORRELATION,
                DATA_FLOAT,
            ),
        )?;
        let (mut on, mut oc, mut oh, mut ow) = (0, 0, 0, 0);
        ck(
            "cudnnGetConvolution2dForwardOutputDim",
            (api.cudnnGetConvolution2dForwardOutputDim)(
                cd, xd, wd, &mut on, &mut oc, &mut oh, &mut ow,
            ),
        )?;
        if (on, oc, oh, ow) != (i(s.n), i(s.k), i(s.out_h()), i(s.out_w())) {
            return Err(ConvError::Cudnn {
                call: "cudnnGetConvolution2dForwardOutputDim",
                text: format!(
                    "output {on}×{oc}×{oh}×{ow}, expected {}×{}×{}×{}",
                    s.n,
                    s.k,
                    s.out_h(),
                    s.out_w()
                ),
            });
        }
        let mut yd: Handle = std::ptr::null_mut();
        ck(
            "cudnnCreateTensorDescriptor",
            (api.cudnnCreateTensorDescriptor)(&mut yd),
        )?;
        let _yd = Owned(yd, api.cudnnDestroyTensorDescriptor, Default::default());
        ck(
            "cudnnSetTensor4dDescriptor",
            (api.cudnnSetTensor4dDescriptor)(yd, TENSOR_NCHW, DATA_FLOAT, on, oc, oh, ow),
        )?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        ck(
            "cudnnConvolutionForward",
            (api.cudnnConvolutionForward)(
                h,
                (&alpha as *const f32).cast(),
                xd,
                dx.as_ptr::<c_void>(),
                wd,
                dw.as_ptr::<c_void>(),
                cd,
                FWD_ALGO_IMPLICIT_GEMM,
                std::ptr::null_mut(),
                0,
                (&beta as *const f32).cast(),
                yd,
                dy.as_ptr::<c_void>(),
            ),
        )?;
    }
    dev.synchronize()?;
    let mut y = vec![0f32; s.output_len()];
    dy.download(&mut y)?;
    let want = reference::conv2d_reference(&x, &w, &s);
    let positions: Vec<(usize, usize)> = (0..y.len()).map(|i| (i, 0)).collect();
    let accuracy = reference::compare(
        &positions,
        |i, _| f64::from(y[i]),
        |i, _| want[i],
        y.iter().all(|v| v.is_finite()),
        CONV_TOLERANCE,
    );
    Ok(ConvResult {
        shape: s,
        algorithm: "IMPLICIT_GEMM",
        accuracy,
    })
}
