
extern "C" __global__ void __launch_bounds__(256, 4) lf_ew_36ca961385abd604(
    int n,
    int ext1,
    int off0,
    int st0_0,
    int st0_1,
    int off1,
    int st1_0,
    int st1_1,
    const float* __restrict__ in0,
    float arg0,
    const float* __restrict__ in1,
    float* __restrict__ out0)
{
    for (int v0 = ((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x; v0 < n; v0 += (int)blockDim.x * (int)gridDim.x) {
        int v1 = (v0 % ext1);
        int v2 = (v0 / ext1);
        int v3 = v2;
        float v4 = in0[(off0 + (v3 * st0_0)) + (v1 * st0_1)];
        float v5 = arg0;
        float v6 = lf_multiply(v4, v5);
        float v7 = in1[(off1 + (v3 * st1_0)) + (v1 * st1_1)];
        float v8 = lf_add(v6, v7);
        out0[v0] = v8;
    }
}
