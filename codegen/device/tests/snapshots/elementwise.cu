
extern "C" __global__ void __launch_bounds__(256, 4) lf_ew_b0b5d676ac292a7c(
    int n,
    const float* __restrict__ in0,
    const float* __restrict__ in1,
    float arg0,
    float* __restrict__ out0)
{
    int v0 = (n / 4);
    for (int v1 = ((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x; v1 < v0; v1 += (int)blockDim.x * (int)gridDim.x) {
        const float4 tv2 = reinterpret_cast<const float4*>(in0)[v1];
        float v2 = tv2.x;
        float v3 = tv2.y;
        float v4 = tv2.z;
        float v5 = tv2.w;
        const float4 tv6 = reinterpret_cast<const float4*>(in1)[v1];
        float v6 = tv6.x;
        float v7 = tv6.y;
        float v8 = tv6.z;
        float v9 = tv6.w;
        float v10 = v2;
        float v11 = v6;
        float v12 = lf_multiply(v10, v11);
        float v13 = arg0;
        float v14 = lf_add(v12, v13);
        float v15 = v3;
        float v16 = v7;
        float v17 = lf_multiply(v15, v16);
        float v18 = arg0;
        float v19 = lf_add(v17, v18);
        float v20 = v4;
        float v21 = v8;
        float v22 = lf_multiply(v20, v21);
        float v23 = arg0;
        float v24 = lf_add(v22, v23);
        float v25 = v5;
        float v26 = v9;
        float v27 = lf_multiply(v25, v26);
        float v28 = arg0;
        float v29 = lf_add(v27, v28);
        reinterpret_cast<float4*>(out0)[v1] = make_float4(v14, v19, v24, v29);
    }
    for (int v30 = (v0 * 4) + (((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x); v30 < n; v30 += (int)blockDim.x * (int)gridDim.x) {
        float v31 = in0[v30];
        float v32 = in1[v30];
        float v33 = lf_multiply(v31, v32);
        float v34 = arg0;
        float v35 = lf_add(v33, v34);
        out0[v30] = v35;
    }
}
