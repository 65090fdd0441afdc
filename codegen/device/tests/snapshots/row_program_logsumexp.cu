
extern "C" __global__ void __launch_bounds__(256, 4) lf_row_bed1718738988f53(
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
            float v6 = in0[v2 + (v5 * st0_1)];
            float v7 = lf_maximum(v3, v6);
            v3 = v7;
        }
        float v8 = v3;
        v8 = __shfl_down_sync(0xffffffffu, v3, 16);
        float v9 = lf_maximum(v3, v8);
        v3 = v9;
        float v10 = v3;
        v10 = __shfl_down_sync(0xffffffffu, v3, 8);
        float v11 = lf_maximum(v3, v10);
        v3 = v11;
        float v12 = v3;
        v12 = __shfl_down_sync(0xffffffffu, v3, 4);
        float v13 = lf_maximum(v3, v12);
        v3 = v13;
        float v14 = v3;
        v14 = __shfl_down_sync(0xffffffffu, v3, 2);
        float v15 = lf_maximum(v3, v14);
        v3 = v15;
        float v16 = v3;
        v16 = __shfl_down_sync(0xffffffffu, v3, 1);
        float v17 = lf_maximum(v3, v16);
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
            float v19 = lf_maximum(v3, v18);
            v3 = v19;
            float v20 = v3;
            v20 = __shfl_down_sync(0xffffffffu, v3, 8);
            float v21 = lf_maximum(v3, v20);
            v3 = v21;
            float v22 = v3;
            v22 = __shfl_down_sync(0xffffffffu, v3, 4);
            float v23 = lf_maximum(v3, v22);
            v3 = v23;
            float v24 = v3;
            v24 = __shfl_down_sync(0xffffffffu, v3, 2);
            float v25 = lf_maximum(v3, v24);
            v3 = v25;
            float v26 = v3;
            v26 = __shfl_down_sync(0xffffffffu, v3, 1);
            float v27 = lf_maximum(v3, v26);
            v3 = v27;
        }
        if ((int)threadIdx.x == 0) {
            float v28 = v3;
            row_value[0] = v28;
        }
        __syncthreads();
        float v29 = row_value[0];
        float v30 = arg1;
        for (int v31 = (int)threadIdx.x; v31 < reduced; v31 += (int)blockDim.x) {
            int v32 = v31;
            float v33 = in0[v2 + (v32 * st0_1)];
            float v34 = v29;
            float v35 = lf_subtract(v33, v34);
            float v36 = lf_exp(v35);
            float v37 = lf_add(v30, v36);
            v30 = v37;
        }
        float v38 = v30;
        v38 = __shfl_down_sync(0xffffffffu, v30, 16);
        float v39 = lf_add(v30, v38);
        v30 = v39;
        float v40 = v30;
        v40 = __shfl_down_sync(0xffffffffu, v30, 8);
        float v41 = lf_add(v30, v40);
        v30 = v41;
        float v42 = v30;
        v42 = __shfl_down_sync(0xffffffffu, v30, 4);
        float v43 = lf_add(v30, v42);
        v30 = v43;
        float v44 = v30;
        v44 = __shfl_down_sync(0xffffffffu, v30, 2);
        float v45 = lf_add(v30, v44);
        v30 = v45;
        float v46 = v30;
        v46 = __shfl_down_sync(0xffffffffu, v30, 1);
        float v47 = lf_add(v30, v46);
        v30 = v47;
        if (((int)threadIdx.x % 32) == 0) {
            warp_partials_3[(int)threadIdx.x / 32] = v30;
        }
        __syncthreads();
        if ((int)threadIdx.x < 32) {
            if ((int)threadIdx.x < 8) {
                v30 = warp_partials_3[(int)threadIdx.x];
            } else {
                v30 = arg1;
            }
            float v48 = v30;
            v48 = __shfl_down_sync(0xffffffffu, v30, 16);
            float v49 = lf_add(v30, v48);
            v30 = v49;
            float v50 = v30;
            v50 = __shfl_down_sync(0xffffffffu, v30, 8);
            float v51 = lf_add(v30, v50);
            v30 = v51;
            float v52 = v30;
            v52 = __shfl_down_sync(0xffffffffu, v30, 4);
            float v53 = lf_add(v30, v52);
            v30 = v53;
            float v54 = v30;
            v54 = __shfl_down_sync(0xffffffffu, v30, 2);
            float v55 = lf_add(v30, v54);
            v30 = v55;
            float v56 = v30;
            v56 = __shfl_down_sync(0xffffffffu, v30, 1);
            float v57 = lf_add(v30, v56);
            v30 = v57;
        }
        if ((int)threadIdx.x == 0) {
            float v58 = v30;
            row_value_1[0] = v58;
        }
        __syncthreads();
        float v59 = row_value_1[0];
        if ((int)threadIdx.x == 0) {
            float v60 = v29;
            float v61 = v59;
            float v62 = lf_log(v61);
            float v63 = lf_add(v60, v62);
            out0[v0] = v63;
        }
        __syncthreads();
    }
}
