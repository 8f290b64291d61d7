//! The typed host launcher `launch(stream, config, args..)` and `compile(context, ..)`.

use cudajit_core::abi::{self, ArgWord};
use cudajit_core::ast::{FunctionSource, GenericKind, ParamType, ValueType};
use cudajit_core::Scalar;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Paths;

/// `launch` takes the kernel's arguments as host values (scalars by value, buffers for
/// `&[T]`/`&mut [T]`, so the borrow checker enforces the kernel's aliasing rules) and a
/// stream of either backend (`cudajit::LaunchStream`): on a CUDA stream it resolves the
/// compiled kernel for the stream's context (and the specialisation given by the generic
/// arguments and `#[comptime]` values) and launches it; on the CPU simulator it runs the
/// same specialisation there. `compile` does the GPU part ahead of time.
pub(super) fn launch_fns(
    source: &FunctionSource,
    generics: &syn::Generics,
    sig: &syn::Signature,
    paths: &Paths,
) -> TokenStream {
    let cudajit = paths.cudajit();
    // A struct's type as the user wrote it (`nccl::DevComm`), for the launcher's parameter.
    let written_or = |param: &str, value: &ValueType| match value {
        ValueType::Struct(_) => written_type(sig, param).unwrap_or_else(|| value_tokens(value)),
        _ => value_tokens(value),
    };
    let private = paths.private();
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
    let context = if taken("context") {
        format_ident!("compile_context")
    } else {
        format_ident!("context")
    };

    let mut params = Vec::new();
    let mut comptime_params = Vec::new();
    let mut lengths = Vec::new();
    let mut pointers = Vec::new();
    let mut args = Vec::new();
    // The argument ABI's words of `args`, in order, for `ARGUMENT_WORDS`.
    let mut words = Vec::new();
    let abi_path = paths.abi();
    // Launch checks of struct arguments (`LaunchArgument::LAUNCH_CHECK`): a constant `None`
    // for every type but those that ask for one, so the branch folds away.
    let mut checks = Vec::new();
    // The simulator's arguments.
    let mut sim_args = Vec::new();
    for param in &source.params {
        let name = format_ident!("{}", param.name);
        // The launcher's parameter, its launch check and its simulator argument.
        let ty = match &param.ty {
            // Only `#[extern_device]` declarations have reference parameters and only device
            // functions closures; the signature parser never produces either for a kernel.
            ParamType::Reference { .. } | ParamType::Closure { .. } => continue,
            ParamType::Value(value) if param.comptime => {
                // In declaration order among the launch arguments; compiled in, not passed.
                let ty = written_or(&param.name, value);
                params.push(quote!(#name: #ty));
                comptime_params.push(quote!(#name: #ty));
                continue;
            }
            ParamType::Value(value) => {
                let ty = written_or(&param.name, value);
                params.push(quote!(#name: #ty));
                if matches!(value, ValueType::Struct(_)) {
                    checks.push(quote! {
                        if let ::core::option::Option::Some(__cj_check) =
                            <#ty as #private::LaunchArgument>::LAUNCH_CHECK
                        {
                            __cj_kernel.run_launch_check(&__cj_config, &#name, __cj_check)?;
                        }
                    });
                    // Enums run on the simulator as their integer; structs are refused there.
                    sim_args.push(quote!(#private::sim_struct_value(KERNEL.name(), #name)?));
                } else {
                    sim_args.push(quote!(#private::sim_scalar(#name)));
                }
                ty
            }
            // cudajit's own `TensorMap`, whatever the signature's path: a copy of its 128
            // bytes crosses, and its borrow keeps the tensor's buffer alive for the call.
            // On the simulator, a map made over a simulator buffer (`encode_sim`).
            ParamType::TensorMap => {
                let ty = quote!(#cudajit::TensorMap<'_>);
                params.push(quote!(#name: #ty));
                sim_args.push(quote!(#private::sim_tensor_map(KERNEL.name(), &#name)?));
                ty
            }
            ParamType::Slice { elem, mutable } => {
                let ty = written_or(&param.name, elem);
                if *mutable {
                    params.push(quote!(#name: &mut impl #cudajit::KernelSliceMut<#ty>));
                    sim_args.push(quote!(#cudajit::KernelSliceMut::<#ty>::sim_slice_mut(#name)?));
                } else {
                    params.push(quote!(#name: &impl #cudajit::KernelSlice<#ty>));
                    sim_args.push(quote!(#cudajit::KernelSlice::<#ty>::sim_slice(#name)?));
                }
                ty
            }
        };
        // The GPU's argument list: one live local per word of the argument ABI.
        let Some(class) = abi::ParamClass::of_captured(&param.ty) else {
            continue;
        };
        for word in abi::words(class) {
            let (local, word_path) = match word {
                ArgWord::Value => {
                    let local = format_ident!("__cj_value_{}", param.name);
                    pointers.push(quote!(let #local = #name;));
                    (local, quote!(Value))
                }
                ArgWord::BoolByte => {
                    let local = format_ident!("__cj_value_{}", param.name);
                    let byte = format_ident!("{}", abi::BOOL_BYTE.rust_name());
                    pointers.push(quote!(let #local = #name as #byte;));
                    (local, quote!(BoolByte))
                }
                ArgWord::TensorMap => {
                    let local = format_ident!("__cj_value_{}", param.name);
                    // A map made for the simulator names no GPU memory: refused, not run.
                    pointers.push(quote!(#private::gpu_tensor_map(KERNEL.name(), &#name)?;));
                    pointers.push(quote!(let #local: #ty = #name;));
                    (local, quote!(TensorMap))
                }
                ArgWord::SlicePointer { mutable } => {
                    let ptr = format_ident!("__cj_ptr_{}", param.name);
                    let sync = format_ident!("__cj_sync_{}", param.name);
                    pointers.push(if *mutable {
                        quote!(let (#ptr, #sync) = #cudajit::KernelSliceMut::<#ty>::cuda_ptr_mut(#name, #stream)?;)
                    } else {
                        quote!(let (#ptr, #sync) = #cudajit::KernelSlice::<#ty>::cuda_ptr(#name, #stream)?;)
                    });
                    (ptr, quote!(SlicePointer { mutable: #mutable }))
                }
                ArgWord::SliceLength => {
                    let len = format_ident!("__cj_len_{}", param.name);
                    let length = format_ident!("{}", abi::SLICE_LENGTH.rust_name());
                    // Before the pointers: `cuda_ptr_mut` borrows the slice mutably.
                    lengths.push(match class {
                        abi::ParamClass::Slice { mutable: true } => quote!(let #len: #length = #cudajit::KernelSliceMut::<#ty>::slice_len(&*#name) as #length;),
                        _ => quote!(let #len: #length = #cudajit::KernelSlice::<#ty>::slice_len(#name) as #length;),
                    });
                    (len, quote!(SliceLength))
                }
            };
            args.push(quote!(#private::arg(&#local)));
            words.push(quote!(#abi_path::ArgWord::#word_path));
        }
    }

    // The specialisation: generic arguments, then `#[comptime]` values, in order.
    let mut spec_parts = Vec::new();
    for generic in &source.generics {
        let name = format_ident!("{}", generic.name);
        let text = &generic.name;
        match &generic.kind {
            GenericKind::Type { .. } => {
                spec_parts.push(quote!(.ty(#text, <#name as #cudajit::DeviceScalar>::SCALAR)))
            }
            GenericKind::Const(ty) => {
                let scalar = scalar_path(*ty, paths);
                spec_parts.push(quote!(.constant(#text, #scalar, #name as u64)))
            }
        }
    }
    for param in source.params.iter().filter(|p| p.comptime) {
        let name = format_ident!("{}", param.name);
        let text = &param.name;
        if let ParamType::Value(ValueType::Scalar(ty)) = &param.ty {
            let scalar = scalar_path(*ty, paths);
            spec_parts.push(quote!(.constant(#text, #scalar, #name as u64)));
        }
    }
    let generic_kernel = !spec_parts.is_empty();
    let sim_launch = {
        let sim_arg = paths.sim_arg();
        let sim_count = sim_args.len();
        quote! {
            let __cj_sim_args: [#sim_arg<'_>; #sim_count] = [#(#sim_args),*];
            KERNEL.simulate(
                __cj_sim,
                &#private::SpecBuilder::new() #(#spec_parts)*,
                &__cj_config,
                &__cj_sim_args,
            )
        }
    };
    let resolve = if generic_kernel {
        quote!(KERNEL.specialized(#stream, &#private::SpecBuilder::new() #(#spec_parts)*)?)
    } else {
        quote!(KERNEL.function(#stream)?)
    };
    let compile_body = if generic_kernel {
        quote!(KERNEL.compile_specialized(#context, &#private::SpecBuilder::new() #(#spec_parts)*))
    } else {
        quote!(KERNEL.compile(#context))
    };

    let (impl_generics, _, _) = generics.split_for_impl();
    let count = args.len();
    let doc = format!(
        "Launches `{}` on `{stream}` with `{config}` (grid, block, dynamic shared memory).\n\n\
         The first launch of a specialisation on a GPU compiles it (or loads it from the \
         cache); later launches only check the configuration and call the driver. On the \
         CPU simulator (a `cudajit::SimStream`, or a `cudajit::Stream` on it) the kernel \
         runs to completion before `launch` returns. Errors: an invalid configuration, a \
         compile failure, the driver's launch error, or what the simulator found wrong.",
        source.name
    );
    quote! {
        /// The launch's argument words in order, as the argument ABI (`cudajit::core::abi`)
        /// passes the parameters; the kernel's NVVM IR declares one parameter per word.
        #[doc(hidden)]
        pub const ARGUMENT_WORDS: &[#abi_path::ArgWord] = &[#(#words),*];

        /// Compiles the kernel for `context`'s GPU and loads it, ahead of the first
        /// launch (the launch would do it otherwise). Returns the loaded kernel with the
        /// compile report.
        pub fn compile #impl_generics (
            #context: &::std::sync::Arc<#cudajit::CudaContext>,
            #(#comptime_params),*
        ) -> ::core::result::Result<&'static #cudajit::LoadedKernel, #cudajit::Error> {
            #compile_body
        }

        #[doc = #doc]
        #[allow(clippy::too_many_arguments, clippy::needless_borrow)]
        pub fn launch #impl_generics (
            #stream: &impl #cudajit::LaunchStream,
            #config: impl ::core::convert::Into<#cudajit::LaunchConfig>,
            #(#params),*
        ) -> ::core::result::Result<(), #cudajit::Error> {
            let __cj_config: #cudajit::LaunchConfig = #config.into();
            match #cudajit::LaunchStream::target(#stream) {
                #cudajit::StreamTarget::Cuda(#stream) => {
                    let __cj_kernel = #resolve;
                    __cj_kernel.check(&__cj_config)?;
                    #(#checks)*
                    #(#lengths)*
                    #(#pointers)*
                    let mut __cj_args: [*mut ::core::ffi::c_void; #count] = [#(#args),*];
                    // SAFETY: the argument list is generated from the same captured
                    // parameters as the compiled kernel's signature: one value per scalar,
                    // pointer and length per slice, each pointing at a live local of the
                    // right type.
                    unsafe { __cj_kernel.launch_raw(#stream, &__cj_config, &mut __cj_args) }
                }
                #cudajit::StreamTarget::Sim(__cj_sim) => {
                    #sim_launch
                }
            }
        }
    }
}

/// The type of parameter `name` as written in `sig`, or its element type for a slice.
fn written_type(sig: &syn::Signature, name: &str) -> Option<TokenStream> {
    sig.inputs.iter().find_map(|input| {
        let syn::FnArg::Typed(typed) = input else {
            return None;
        };
        let syn::Pat::Ident(ident) = &*typed.pat else {
            return None;
        };
        if ident.ident != name {
            return None;
        }
        let ty = match &*typed.ty {
            syn::Type::Reference(reference) => match &*reference.elem {
                syn::Type::Slice(slice) => &*slice.elem,
                other => other,
            },
            other => other,
        };
        Some(quote!(#ty))
    })
}

fn value_tokens(value: &ValueType) -> TokenStream {
    match value {
        ValueType::Scalar(scalar) => {
            let ident = format_ident!("{}", scalar.rust_name());
            quote!(#ident)
        }
        ValueType::Generic(name) | ValueType::Struct(name) => {
            let ident = format_ident!("{}", name);
            quote!(#ident)
        }
        // Kernels never take tuples (the signature parser rejects them).
        ValueType::Tuple(elements) => {
            let elements = elements.iter().map(value_tokens);
            quote!((#(#elements,)*))
        }
        // Nor arrays (rejected there too).
        ValueType::Array { elem, len } => {
            let elem = value_tokens(elem);
            match len {
                cudajit_core::ast::ArrayLen::Literal(n) => {
                    let n = *n as usize;
                    quote!([#elem; #n])
                }
                cudajit_core::ast::ArrayLen::Generic(name) => {
                    let name = format_ident!("{}", name);
                    quote!([#elem; #name])
                }
            }
        }
    }
}

fn scalar_path(scalar: Scalar, paths: &Paths) -> TokenStream {
    let scalar_type = paths.scalar();
    let variant = format_ident!("{}", format!("{scalar:?}"));
    quote!(#scalar_type::#variant)
}
