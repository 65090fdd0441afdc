
extern "C" __global__ void __launch_bounds__(256, 4) lf_red_40215988dba94c92_partial(
    float arg1,
    int n,
    const float* __restrict__ in0,
    float arg0,
    const float* __restrict__ in1,
    float* __restrict__ partials)
{
    __shared__ float warp_partials[8];
    float v0 = arg1;
    for (int v1 = ((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x; v1 < n; v1 += (int)blockDim.x * (int)gridDim.x) {
        float v2 = in0[v1];
        float v3 = arg0;
        float v4 = lf_subtract(v2, v3);
        float v5 = in1[v1];
        float v6 = lf_multiply(v4, v5);
        float v7 = lf_add(v0, v6);
        v0 = v7;
    }
    float v8 = v0;
    v8 = __shfl_down_sync(0xffffffffu, v0, 16);
    float v9 = lf_add(v0, v8);
    v0 = v9;
    float v10 = v0;
    v10 = __shfl_down_sync(0xffffffffu, v0, 8);
    float v11 = lf_add(v0, v10);
    v0 = v11;
    float v12 = v0;
    v12 = __shfl_down_sync(0xffffffffu, v0, 4);
    float v13 = lf_add(v0, v12);
    v0 = v13;
    float v14 = v0;
    v14 = __shfl_down_sync(0xffffffffu, v0, 2);
    float v15 = lf_add(v0, v14);
    v0 = v15;
    float v16 = v0;
    v16 = __shfl_down_sync(0xffffffffu, v0, 1);
    float v17 = lf_add(v0, v16);
    v0 = v17;
    if (((int)threadIdx.x % 32) == 0) {
        warp_partials[(int)threadIdx.x / 32] = v0;
    }
    __syncthreads();
    if ((int)threadIdx.x < 32) {
        if ((int)threadIdx.x < 8) {
            v0 = warp_partials[(int)threadIdx.x];
        } else {
            v0 = arg1;
        }
        float v18 = v0;
        v18 = __shfl_down_sync(0xffffffffu, v0, 16);
        float v19 = lf_add(v0, v18);
        v0 = v19;
        float v20 = v0;
        v20 = __shfl_down_sync(0xffffffffu, v0, 8);
        float v21 = lf_add(v0, v20);
        v0 = v21;
        float v22 = v0;
        v22 = __shfl_down_sync(0xffffffffu, v0, 4);
        float v23 = lf_add(v0, v22);
        v0 = v23;
        float v24 = v0;
        v24 = __shfl_down_sync(0xffffffffu, v0, 2);
        float v25 = lf_add(v0, v24);
        v0 = v25;
        float v26 = v0;
        v26 = __shfl_down_sync(0xffffffffu, v0, 1);
        float v27 = lf_add(v0, v26);
        v0 = v27;
    }
    if ((int)threadIdx.x == 0) {
        partials[(int)blockIdx.x] = v0;
    }
}

extern "C" __global__ void __launch_bounds__(256, 4) lf_red_40215988dba94c92_final(
    float arg1,
    const float* __restrict__ partials,
    int count,
    float* __restrict__ out0)
{
    __shared__ float warp_partials[8];
    float v0 = arg1;
    for (int v1 = (int)threadIdx.x; v1 < count; v1 += (int)blockDim.x) {
        float v2 = partials[v1];
        float v3 = lf_add(v0, v2);
        v0 = v3;
    }
    float v4 = v0;
    v4 = __shfl_down_sync(0xffffffffu, v0, 16);
    float v5 = lf_add(v0, v4);
    v0 = v5;
    float v6 = v0;
    v6 = __shfl_down_sync(0xffffffffu, v0, 8);
    float v7 = lf_add(v0, v6);
    v0 = v7;
    float v8 = v0;
    v8 = __shfl_down_sync(0xffffffffu, v0, 4);
    float v9 = lf_add(v0, v8);
    v0 = v9;
    float v10 = v0;
    v10 = __shfl_down_sync(0xffffffffu, v0, 2);
    float v11 = lf_add(v0, v10);
    v0 = v11;
    float v12 = v0;
    v12 = __shfl_down_sync(0xffffffffu, v0, 1);
    float v13 = lf_add(v0, v12);
    v0 = v13;
    if (((int)threadIdx.x % 32) == 0) {
        warp_partials[(int)threadIdx.x / 32] = v0;
    }
    __syncthreads();
    if ((int)threadIdx.x < 32) {
        if ((int)threadIdx.x < 8) {
            v0 = warp_partials[(int)threadIdx.x];
        } else {
            v0 = arg1;
        }
        float v14 = v0;
        v14 = __shfl_down_sync(0xffffffffu, v0, 16);
        float v15 = lf_add(v0, v14);
        v0 = v15;
        float v16 = v0;
        v16 = __shfl_down_sync(0xffffffffu, v0, 8);
        float v17 = lf_add(v0, v16);
        v0 = v17;
        float v18 = v0;
        v18 = __shfl_down_sync(0xffffffffu, v0, 4);
        float v19 = lf_add(v0, v18);
        v0 = v19;
        float v20 = v0;
        v20 = __shfl_down_sync(0xffffffffu, v0, 2);
        float v21 = lf_add(v0, v20);
        v0 = v21;
        float v22 = v0;
        v22 = __shfl_down_sync(0xffffffffu, v0, 1);
        float v23 = lf_add(v0, v22);
        v0 = v23;
    }
    if ((int)threadIdx.x == 0) {
        float v24 = v0;
        out0[0] = v24;
    }
}
