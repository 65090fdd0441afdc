extern "C" __global__ void block_sum(
    const float* __restrict__ a,
    long long a_shape0,
    float* __restrict__ sums,
    long long sums_shape0)
{
    __shared__ float shared0[256];
    long long v0 = (long long)threadIdx.x;
    long long v1 = lf_add(lf_multiply((long long)blockIdx.x, (long long)blockDim.x), (long long)threadIdx.x);
    shared0[v0] = (lf_less(v1, a_shape0) ? a[v1] : 0e0f);
    __syncthreads();
    long long v2 = 128LL;
    while (lf_greater(v2, 0LL)) {
        if (lf_less(v0, v2)) {
            shared0[v0] = lf_add(shared0[v0], shared0[lf_add(v0, v2)]);
        }
        __syncthreads();
        v2 = lf_floor_divide(v2, 2LL);
    }
    if (lf_equal(v0, 0LL)) {
        long long v3 = (long long)blockIdx.x;
        sums[v3] = shared0[0LL];
    }
}
