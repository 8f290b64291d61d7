//! The typed host launcher `launch(stream, config, args..)`.

use cudajit_core::ast::{KernelSource, ParamType};
use cudajit_core::Scalar;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::paths;

/// `launch`: takes the kernel's arguments as host values (scalars by value, device slices
/// for `&[T]`/`&mut [T]`, so the borrow checker enforces the kernel's aliasing rules),
/// resolves the compiled kernel for the stream's context and launches it.
pub(super) fn launch_fn(source: &KernelSource) -> TokenStream {
    let cudajit = paths::cudajit();
    let private = quote!(#cudajit::__private);
    let taken = |n: &str| source.params.iter().any(|p| p.name == n);
    let stream = if taken("stream") {
        format_ident!("launch_stream")
    } else {
        format_ident!("stream")
    };
    let config = if taken("config") {
        format_ident!("launch_config")
    } else {
        format_ident!("config")
    };

    let mut params = Vec::new();
    let mut lengths = Vec::new();
    let mut pointers = Vec::new();
    let mut args = Vec::new();
    for param in &source.params {
        let name = format_ident!("{}", param.name);
        match param.ty {
            ParamType::Scalar(scalar) => {
                let ty = scalar_tokens(scalar);
                params.push(quote!(#name: #ty));
                let value = format_ident!("__cj_value_{}", param.name);
                // `bool` travels as one byte, as CUDA C++ passes it.
                let convert = if scalar == Scalar::Bool {
                    quote!(#name as u8)
                } else {
                    quote!(#name)
                };
                pointers.push(quote!(let #value = #convert;));
                args.push(quote!(#private::arg(&#value)));
            }
            ParamType::Slice { elem, mutable } => {
                let ty = scalar_tokens(elem);
                let len = format_ident!("__cj_len_{}", param.name);
                let ptr = format_ident!("__cj_ptr_{}", param.name);
                let sync = format_ident!("__cj_sync_{}", param.name);
                lengths.push(quote!(let #len: u64 = #private::slice_len::<#ty, _>(#name);));
                if mutable {
                    params.push(quote!(#name: &mut impl #cudajit::DevicePtrMut<#ty>));
                    pointers.push(quote!(let (#ptr, #sync) = #cudajit::DevicePtrMut::device_ptr_mut(#name, #stream);));
                } else {
                    params.push(quote!(#name: &impl #cudajit::DevicePtr<#ty>));
                    pointers.push(quote!(let (#ptr, #sync) = #cudajit::DevicePtr::device_ptr(#name, #stream);));
                }
                args.push(quote!(#private::arg(&#ptr)));
                args.push(quote!(#private::arg(&#len)));
            }
        }
    }
    let count = args.len();
    let doc = format!(
        "Launches `{}` on `{stream}` with `{config}` (grid, block, dynamic shared memory).\n\n\
         The first launch on a GPU compiles the kernel (or loads it from the cache); later \
         launches only check the configuration and call the driver. Errors: an invalid \
         configuration, a compile failure, or the driver's launch error.",
        source.name
    );
    quote! {
        #[doc = #doc]
        #[allow(clippy::too_many_arguments, clippy::needless_borrow)]
        pub fn launch(
            #stream: &#cudajit::CudaStream,
            #config: impl ::core::convert::Into<#cudajit::LaunchConfig>,
            #(#params),*
        ) -> ::core::result::Result<(), #cudajit::Error> {
            let __cj_config: #cudajit::LaunchConfig = #config.into();
            let __cj_kernel = KERNEL.function(#stream)?;
            __cj_kernel.check(&__cj_config)?;
            #(#lengths)*
            #(#pointers)*
            let mut __cj_args: [*mut ::core::ffi::c_void; #count] = [#(#args),*];
            // SAFETY: the argument list is generated from the same captured parameters as
            // the compiled kernel's signature: one value per scalar, pointer and length per
            // slice, each pointing at a live local of the right type.
            unsafe { __cj_kernel.launch_raw(#stream, &__cj_config, &mut __cj_args) }
        }
    }
}

fn scalar_tokens(scalar: Scalar) -> TokenStream {
    let ident = format_ident!("{}", scalar.rust_name());
    quote!(#ident)
}
