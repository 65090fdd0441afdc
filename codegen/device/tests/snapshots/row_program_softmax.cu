
extern "C" __global__ void __launch_bounds__(256, 4) lf_row_ac04a2e62c0e5c88(
    int kept,
    int reduced,
    int off0,
    int st0_0,
    float arg0,
    int st0_1,
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
        int v2 = (off0 + (v1 * st0_0));
        float v3 = arg0;
        for (int v4 = (int)threadIdx.x; v4 < reduced; v4 += (int)blockDim.x) {
            int v5 = v4;
            int v6 = (v2 + (v5 * st0_1));
            float v7 = in0[v6];
            float v8 = lf_maximum(v3, v7);
            v3 = v8;
        }
        float v9 = v3;
        v9 = __shfl_down_sync(0xffffffffu, v3, 16);
        float v10 = lf_maximum(v3, v9);
        v3 = v10;
        float v11 = v3;
        v11 = __shfl_down_sync(0xffffffffu, v3, 8);
        float v12 = lf_maximum(v3, v11);
        v3 = v12;
        float v13 = v3;
        v13 = __shfl_down_sync(0xffffffffu, v3, 4);
        float v14 = lf_maximum(v3, v13);
        v3 = v14;
        float v15 = v3;
        v15 = __shfl_down_sync(0xffffffffu, v3, 2);
        float v16 = lf_maximum(v3, v15);
        v3 = v16;
        float v17 = v3;
        v17 = __shfl_down_sync(0xffffffffu, v3, 1);
        float v18 = lf_maximum(v3, v17);
        v3 = v18;
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
            float v19 = v3;
            v19 = __shfl_down_sync(0xffffffffu, v3, 16);
            float v20 = lf_maximum(v3, v19);
            v3 = v20;
            float v21 = v3;
            v21 = __shfl_down_sync(0xffffffffu, v3, 8);
            float v22 = lf_maximum(v3, v21);
            v3 = v22;
            float v23 = v3;
            v23 = __shfl_down_sync(0xffffffffu, v3, 4);
            float v24 = lf_maximum(v3, v23);
            v3 = v24;
            float v25 = v3;
            v25 = __shfl_down_sync(0xffffffffu, v3, 2);
            float v26 = lf_maximum(v3, v25);
            v3 = v26;
            float v27 = v3;
            v27 = __shfl_down_sync(0xffffffffu, v3, 1);
            float v28 = lf_maximum(v3, v27);
            v3 = v28;
        }
        if ((int)threadIdx.x == 0) {
            float v29 = v3;
            row_value[0] = v29;
        }
        __syncthreads();
        float v30 = row_value[0];
        float v31 = arg1;
        for (int v32 = (int)threadIdx.x; v32 < reduced; v32 += (int)blockDim.x) {
            int v33 = v32;
            int v34 = (v2 + (v33 * st0_1));
            float v35 = in0[v34];
            float v36 = v30;
            float v37 = lf_subtract(v35, v36);
            float v38 = lf_exp(v37);
            float v39 = lf_add(v31, v38);
            v31 = v39;
        }
        float v40 = v31;
        v40 = __shfl_down_sync(0xffffffffu, v31, 16);
        float v41 = lf_add(v31, v40);
        v31 = v41;
        float v42 = v31;
        v42 = __shfl_down_sync(0xffffffffu, v31, 8);
        float v43 = lf_add(v31, v42);
        v31 = v43;
        float v44 = v31;
        v44 = __shfl_down_sync(0xffffffffu, v31, 4);
        float v45 = lf_add(v31, v44);
        v31 = v45;
        float v46 = v31;
        v46 = __shfl_down_sync(0xffffffffu, v31, 2);
        float v47 = lf_add(v31, v46);
        v31 = v47;
        float v48 = v31;
        v48 = __shfl_down_sync(0xffffffffu, v31, 1);
        float v49 = lf_add(v31, v48);
        v31 = v49;
        if (((int)threadIdx.x % 32) == 0) {
            warp_partials_3[(int)threadIdx.x / 32] = v31;
        }
        __syncthreads();
        if ((int)threadIdx.x < 32) {
            if ((int)threadIdx.x < 8) {
                v31 = warp_partials_3[(int)threadIdx.x];
            } else {
                v31 = arg1;
            }
            float v50 = v31;
            v50 = __shfl_down_sync(0xffffffffu, v31, 16);
            float v51 = lf_add(v31, v50);
            v31 = v51;
            float v52 = v31;
            v52 = __shfl_down_sync(0xffffffffu, v31, 8);
            float v53 = lf_add(v31, v52);
            v31 = v53;
            float v54 = v31;
            v54 = __shfl_down_sync(0xffffffffu, v31, 4);
            float v55 = lf_add(v31, v54);
            v31 = v55;
            float v56 = v31;
            v56 = __shfl_down_sync(0xffffffffu, v31, 2);
            float v57 = lf_add(v31, v56);
            v31 = v57;
            float v58 = v31;
            v58 = __shfl_down_sync(0xffffffffu, v31, 1);
            float v59 = lf_add(v31, v58);
            v31 = v59;
        }
        if ((int)threadIdx.x == 0) {
            float v60 = v31;
            row_value_1[0] = v60;
        }
        __syncthreads();
        float v61 = row_value_1[0];
        for (int v62 = (int)threadIdx.x; v62 < reduced; v62 += (int)blockDim.x) {
            int v63 = v62;
            int v64 = (v2 + (v63 * st0_1));
            float v65 = in0[v64];
            float v66 = v30;
            float v67 = lf_subtract(v65, v66);
            float v68 = lf_exp(v67);
            float v69 = v61;
            float v70 = lf_true_divide(v68, v69);
            out0[(v0 * reduced) + v62] = v70;
        }
        __syncthreads();
    }
}
