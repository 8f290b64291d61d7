use cudajit::prelude::*;

// A tensor map crosses by value, as a grid-constant parameter.
#[kernel]
fn by_reference(map: &TensorMap, out: &mut [u64]) {
    out[0] = tensor_map_address(map);
}

// It is read where the launch put it, never written.
#[kernel]
fn mutable(mut map: TensorMap, out: &mut [u64]) {
    out[0] = tensor_map_address(&map);
}

// Only kernels take one; device functions take its address.
#[device]
fn helper(map: TensorMap) -> u64 {
    tensor_map_address(&map)
}

// The address is of the parameter itself.
#[kernel]
fn without_reference(map: TensorMap, out: &mut [u64]) {
    out[0] = tensor_map_address(map);
}

fn main() {}
