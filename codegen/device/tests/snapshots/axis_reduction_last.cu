
extern "C" __global__ void __launch_bounds__(256, 4) lf_red_59cc10026fd68f4a(
    int kept,
    int reduced,
    int off0,
    int st0_0,
    int off1,
    int st1_0,
    float arg0,
    int st0_1,
    int st1_1,
    const float* __restrict__ in0,
    const float* __restrict__ in1,
    float* __restrict__ out0)
{
    __shared__ float warp_partials[8];
    for (int v0 = (int)blockIdx.x; v0 < kept; v0 += (int)gridDim.x) {
        int v1 = v0;
        int v2 = (off0 + (v1 * st0_0));
        int v3 = (off1 + (v1 * st1_0));
        float v4 = arg0;
        for (int v5 = (int)threadIdx.x; v5 < reduced; v5 += (int)blockDim.x) {
            int v6 = v5;
            float v7 = in0[v2 + (v6 * st0_1)];
            float v8 = in1[v3 + (v6 * st1_1)];
            float v9 = lf_add(v7, v8);
            float v10 = lf_add(v4, v9);
            v4 = v10;
        }
        float v11 = v4;
        v11 = __shfl_down_sync(0xffffffffu, v4, 16);
        float v12 = lf_add(v4, v11);
        v4 = v12;
        float v13 = v4;
        v13 = __shfl_down_sync(0xffffffffu, v4, 8);
        float v14 = lf_add(v4, v13);
        v4 = v14;
        float v15 = v4;
        v15 = __shfl_down_sync(0xffffffffu, v4, 4);
        float v16 = lf_add(v4, v15);
        v4 = v16;
        float v17 = v4;
        v17 = __shfl_down_sync(0xffffffffu, v4, 2);
        float v18 = lf_add(v4, v17);
        v4 = v18;
        float v19 = v4;
        v19 = __shfl_down_sync(0xffffffffu, v4, 1);
        float v20 = lf_add(v4, v19);
        v4 = v20;
        if (((int)threadIdx.x % 32) == 0) {
            warp_partials[(int)threadIdx.x / 32] = v4;
        }
        __syncthreads();
        if ((int)threadIdx.x < 32) {
            if ((int)threadIdx.x < 8) {
                v4 = warp_partials[(int)threadIdx.x];
            } else {
                v4 = arg0;
            }
            float v21 = v4;
            v21 = __shfl_down_sync(0xffffffffu, v4, 16);
            float v22 = lf_add(v4, v21);
            v4 = v22;
            float v23 = v4;
            v23 = __shfl_down_sync(0xffffffffu, v4, 8);
            float v24 = lf_add(v4, v23);
            v4 = v24;
            float v25 = v4;
            v25 = __shfl_down_sync(0xffffffffu, v4, 4);
            float v26 = lf_add(v4, v25);
            v4 = v26;
            float v27 = v4;
            v27 = __shfl_down_sync(0xffffffffu, v4, 2);
            float v28 = lf_add(v4, v27);
            v4 = v28;
            float v29 = v4;
            v29 = __shfl_down_sync(0xffffffffu, v4, 1);
            float v30 = lf_add(v4, v29);
            v4 = v30;
        }
        if ((int)threadIdx.x == 0) {
            float v31 = v4;
            out0[v0] = v31;
        }
        __syncthreads();
    }
}
