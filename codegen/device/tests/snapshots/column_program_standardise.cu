
extern "C" __global__ void __launch_bounds__(256, 4) lf_row_92daaed7d45ea73b(
    int kept,
    int reduced,
    int off0,
    int st0_1,
    float arg0,
    int st0_0,
    const float* __restrict__ in0,
    float arg1,
    float* __restrict__ out0)
{
    __shared__ float row_value[1];
    __shared__ float row_value_1[1];
    __shared__ float warp_partials[8];
    __shared__ float warp_partials_3[8];
    for (int v0 = (int)blockIdx.x; v0 < kept; v0 += (int)gridDim.x) {
        int v1 = v0;
        int v2 = (off0 + (v1 * st0_1));
        float v3 = arg0;
        for (int v4 = (int)threadIdx.x; v4 < reduced; v4 += (int)blockDim.x) {
            int v5 = v4;
            float v6 = in0[v2 + (v5 * st0_0)];
            float v7 = lf_add(v3, v6);
            v3 = v7;
        }
        float v8 = v3;
        v8 = __shfl_down_sync(0xffffffffu, v3, 16);
        float v9 = lf_add(v3, v8);
        v3 = v9;
        float v10 = v3;
        v10 = __shfl_down_sync(0xffffffffu, v3, 8);
        float v11 = lf_add(v3, v10);
        v3 = v11;
        float v12 = v3;
        v12 = __shfl_down_sync(0xffffffffu, v3, 4);
        float v13 = lf_add(v3, v12);
        v3 = v13;
        float v14 = v3;
        v14 = __shfl_down_sync(0xffffffffu, v3, 2);
        float v15 = lf_add(v3, v14);
        v3 = v15;
        float v16 = v3;
        v16 = __shfl_down_sync(0xffffffffu, v3, 1);
        float v17 = lf_add(v3, v16);
        v3 = v17;
        if (((int)threadIdx.x % 32) == 0) {
            warp_partials[(int)threadIdx.x / 32] = v3;
        }
        __syncthreads();
        if ((int)threadIdx.x < 32) {
            if ((int)threadIdx.x < 8) {
                v3 = warp_partials[(int)threadIdx.x];
            } else {
                v3 = arg0;
            }
            float v18 = v3;
            v18 = __shfl_down_sync(0xffffffffu, v3, 16);
            float v19 = lf_add(v3, v18);
            v3 = v19;
            float v20 = v3;
            v20 = __shfl_down_sync(0xffffffffu, v3, 8);
            float v21 = lf_add(v3, v20);
            v3 = v21;
            float v22 = v3;
            v22 = __shfl_down_sync(0xffffffffu, v3, 4);
            float v23 = lf_add(v3, v22);
            v3 = v23;
            float v24 = v3;
            v24 = __shfl_down_sync(0xffffffffu, v3, 2);
            float v25 = lf_add(v3, v24);
            v3 = v25;
            float v26 = v3;
            v26 = __shfl_down_sync(0xffffffffu, v3, 1);
            float v27 = lf_add(v3, v26);
            v3 = v27;
        }
        if ((int)threadIdx.x == 0) {
            float v28 = v3;
            float v29 = arg1;
            float v30 = lf_true_divide(v28, v29);
            row_value[0] = v30;
        }
        __syncthreads();
        float v31 = row_value[0];
        float v32 = arg0;
        for (int v33 = (int)threadIdx.x; v33 < reduced; v33 += (int)blockDim.x) {
            int v34 = v33;
            float v35 = in0[v2 + (v34 * st0_0)];
            float v36 = v31;
            float v37 = lf_subtract(v35, v36);
            float v38 = lf_multiply(v37, v37);
            float v39 = lf_add(v32, v38);
            v32 = v39;
        }
        float v40 = v32;
        v40 = __shfl_down_sync(0xffffffffu, v32, 16);
        float v41 = lf_add(v32, v40);
        v32 = v41;
        float v42 = v32;
        v42 = __shfl_down_sync(0xffffffffu, v32, 8);
        float v43 = lf_add(v32, v42);
        v32 = v43;
        float v44 = v32;
        v44 = __shfl_down_sync(0xffffffffu, v32, 4);
        float v45 = lf_add(v32, v44);
        v32 = v45;
        float v46 = v32;
        v46 = __shfl_down_sync(0xffffffffu, v32, 2);
        float v47 = lf_add(v32, v46);
        v32 = v47;
        float v48 = v32;
        v48 = __shfl_down_sync(0xffffffffu, v32, 1);
        float v49 = lf_add(v32, v48);
        v32 = v49;
        if (((int)threadIdx.x % 32) == 0) {
            warp_partials_3[(int)threadIdx.x / 32] = v32;
        }
        __syncthreads();
        if ((int)threadIdx.x < 32) {
            if ((int)threadIdx.x < 8) {
                v32 = warp_partials_3[(int)threadIdx.x];
            } else {
                v32 = arg0;
            }
            float v50 = v32;
            v50 = __shfl_down_sync(0xffffffffu, v32, 16);
            float v51 = lf_add(v32, v50);
            v32 = v51;
            float v52 = v32;
            v52 = __shfl_down_sync(0xffffffffu, v32, 8);
            float v53 = lf_add(v32, v52);
            v32 = v53;
            float v54 = v32;
            v54 = __shfl_down_sync(0xffffffffu, v32, 4);
            float v55 = lf_add(v32, v54);
            v32 = v55;
            float v56 = v32;
            v56 = __shfl_down_sync(0xffffffffu, v32, 2);
            float v57 = lf_add(v32, v56);
            v32 = v57;
            float v58 = v32;
            v58 = __shfl_down_sync(0xffffffffu, v32, 1);
            float v59 = lf_add(v32, v58);
            v32 = v59;
        }
        if ((int)threadIdx.x == 0) {
            float v60 = v32;
            float v61 = arg1;
            float v62 = lf_true_divide(v60, v61);
            float v63 = lf_sqrt(v62);
            row_value_1[0] = v63;
        }
        __syncthreads();
        float v64 = row_value_1[0];
        for (int v65 = (int)threadIdx.x; v65 < reduced; v65 += (int)blockDim.x) {
            int v66 = v65;
            float v67 = in0[v2 + (v66 * st0_0)];
            float v68 = v31;
            float v69 = lf_subtract(v67, v68);
            float v70 = v64;
            float v71 = lf_true_divide(v69, v70);
            out0[(v65 * kept) + v0] = v71;
        }
        __syncthreads();
    }
}
