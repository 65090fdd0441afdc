
extern "C" __global__ void __launch_bounds__(256, 4) lf_red_a708cf5f3ad5aa35(
    int kept,
    int reduced,
    int off0,
    int st0_1,
    int off1,
    int st1_1,
    float arg0,
    int st0_0,
    int st1_0,
    const float* __restrict__ in0,
    const float* __restrict__ in1,
    float* __restrict__ out0)
{
    for (int v0 = ((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x; v0 < kept; v0 += (int)blockDim.x * (int)gridDim.x) {
        int v1 = v0;
        int v2 = (off0 + (v1 * st0_1));
        int v3 = (off1 + (v1 * st1_1));
        float v4 = arg0;
        for (int v5 = 0; v5 < reduced; v5 += 1) {
            int v6 = v5;
            float v7 = in0[v2 + (v6 * st0_0)];
            float v8 = in1[v3 + (v6 * st1_0)];
            float v9 = lf_multiply(v7, v8);
            float v10 = lf_maximum(v4, v9);
            v4 = v10;
        }
        float v11 = v4;
        out0[v0] = v11;
    }
}
