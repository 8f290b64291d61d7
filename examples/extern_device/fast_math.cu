// A small device library for examples/extern_device.rs: CUDA C++ functions with C names,
// so a Rust kernel can declare and call them with `#[extern_device]`.
//
// Build it (LTO-IR inside a fatbin, so the calls inline into the Rust kernel):
//
//     nvcc -dlto -rdc=true -fatbin -arch=sm_90 -o fast_math.fatbin fast_math.cu

// The logistic function with the fast hardware exponential.
extern "C" __device__ float fast_math_sigmoid(float x) {
    return 1.0f / (1.0f + __expf(-x));
}

// Whether `x` lies in `[lo, hi]`: a `bool` result crosses the C ABI as one byte.
extern "C" __device__ bool fast_math_in_range(float x, float lo, float hi) {
    return x >= lo && x <= hi;
}

// `a * b + c` for integers, wrapping.
extern "C" __device__ int fast_math_mad(int a, int b, int c) {
    return a * b + c;
}

// A struct by value, as C passes it: the Rust side declares the same `#[repr(C)]` layout
// with `#[derive(DeviceCopy)]`.
struct Affine {
    float scale;
    float bias;
};

// `scale * x + bias`.
extern "C" __device__ float fast_math_affine(Affine a, float x) {
    return a.scale * x + a.bias;
}
