
extern "C" __global__ void __launch_bounds__(256, 2) lf_ew_b98f4d9c14edaa41(
    int n,
    int off0,
    int st0_0,
    int off1,
    int off2,
    int st2_0,
    int off3,
    int off4,
    int st4_0,
    int off5,
    int off6,
    int st6_0,
    int off7,
    int off8,
    int off9,
    int off10,
    int st10_0,
    int off11,
    int off12,
    int off13,
    int off14,
    int st14_0,
    int off15,
    int off16,
    int off17,
    int off18,
    int st18_0,
    const float* __restrict__ in0,
    const float* __restrict__ in1,
    const float* __restrict__ in2,
    const float* __restrict__ in3,
    const float* __restrict__ in4,
    const float* __restrict__ in5,
    long long arg0,
    float arg1,
    long long arg2,
    long long arg3,
    long long arg4,
    long long arg5,
    long long arg6,
    const float* __restrict__ in7,
    const float* __restrict__ in8,
    const float* __restrict__ in9,
    const float* __restrict__ in11,
    const float* __restrict__ in12,
    const float* __restrict__ in13,
    const float* __restrict__ in15,
    const float* __restrict__ in16,
    const float* __restrict__ in17,
    long long* __restrict__ out0)
{
    for (int v0 = ((int)blockIdx.x * (int)blockDim.x) + (int)threadIdx.x; v0 < n; v0 += (int)blockDim.x * (int)gridDim.x) {
        int v1 = v0;
        float v2 = in0[off0 + (v1 * st0_0)];
        float v3 = in1[off1];
        float v4 = lf_subtract(v2, v3);
        float v5 = lf_square(v4);
        float v6 = in2[off2 + (v1 * st2_0)];
        float v7 = in3[off3];
        float v8 = lf_subtract(v6, v7);
        float v9 = lf_square(v8);
        float v10 = in4[off4 + (v1 * st4_0)];
        float v11 = in5[off5];
        float v12 = lf_subtract(v10, v11);
        float v13 = lf_square(v12);
        float v14 = lf_add(v5, v9);
        float v15 = lf_add(v14, v13);
        bool v16 = lf_isnan(v15);
        long long v17 = arg0;
        float v18 = arg1;
        float v19 = lf_add(v15, v18);
        int v20 = lf_bits_i32(v19);
        long long v21 = lf_to_i64(v20);
        long long v22 = arg2;
        bool v23 = lf_less(v21, v22);
        long long v24 = lf_bitwise_xor(v21, v17);
        long long v25 = (v23 ? v24 : v21);
        long long v26 = lf_invert(v25);
        long long v27 = (v16 ? v17 : v26);
        long long v28 = arg3;
        long long v29 = lf_multiply(v27, v28);
        long long v30 = lf_to_i64((off6 + (v1 * st6_0)));
        long long v31 = arg4;
        long long v32 = arg2;
        long long v33 = lf_multiply(v30, v31);
        long long v34 = lf_add(v33, v32);
        long long v35 = arg5;
        long long v36 = lf_multiply(v34, v35);
        long long v37 = arg6;
        long long v38 = lf_add(v36, v37);
        long long v39 = lf_add(v29, v38);
        float v40 = in7[off7];
        float v41 = lf_subtract(v2, v40);
        float v42 = lf_square(v41);
        float v43 = in8[off8];
        float v44 = lf_subtract(v6, v43);
        float v45 = lf_square(v44);
        float v46 = in9[off9];
        float v47 = lf_subtract(v10, v46);
        float v48 = lf_square(v47);
        float v49 = lf_add(v42, v45);
        float v50 = lf_add(v49, v48);
        bool v51 = lf_isnan(v50);
        float v52 = lf_add(v50, v18);
        int v53 = lf_bits_i32(v52);
        long long v54 = lf_to_i64(v53);
        bool v55 = lf_less(v54, v22);
        long long v56 = lf_bitwise_xor(v54, v17);
        long long v57 = (v55 ? v56 : v54);
        long long v58 = lf_invert(v57);
        long long v59 = (v51 ? v17 : v58);
        long long v60 = lf_multiply(v59, v28);
        long long v61 = lf_to_i64((off10 + (v1 * st10_0)));
        long long v62 = arg4;
        long long v63 = arg2;
        long long v64 = lf_multiply(v61, v62);
        long long v65 = lf_add(v64, v63);
        long long v66 = lf_multiply(v65, v35);
        long long v67 = lf_add(v66, v37);
        long long v68 = lf_add(v60, v67);
        float v69 = in11[off11];
        float v70 = lf_subtract(v2, v69);
        float v71 = lf_square(v70);
        float v72 = in12[off12];
        float v73 = lf_subtract(v6, v72);
        float v74 = lf_square(v73);
        float v75 = in13[off13];
        float v76 = lf_subtract(v10, v75);
        float v77 = lf_square(v76);
        float v78 = lf_add(v71, v74);
        float v79 = lf_add(v78, v77);
        bool v80 = lf_isnan(v79);
        float v81 = lf_add(v79, v18);
        int v82 = lf_bits_i32(v81);
        long long v83 = lf_to_i64(v82);
        bool v84 = lf_less(v83, v22);
        long long v85 = lf_bitwise_xor(v83, v17);
        long long v86 = (v84 ? v85 : v83);
        long long v87 = lf_invert(v86);
        long long v88 = (v80 ? v17 : v87);
        long long v89 = lf_multiply(v88, v28);
        long long v90 = lf_to_i64((off14 + (v1 * st14_0)));
        long long v91 = arg4;
        long long v92 = arg2;
        long long v93 = lf_multiply(v90, v91);
        long long v94 = lf_add(v93, v92);
        long long v95 = lf_multiply(v94, v35);
        long long v96 = lf_add(v95, v37);
        long long v97 = lf_add(v89, v96);
        float v98 = in15[off15];
        float v99 = lf_subtract(v2, v98);
        float v100 = lf_square(v99);
        float v101 = in16[off16];
        float v102 = lf_subtract(v6, v101);
        float v103 = lf_square(v102);
        float v104 = in17[off17];
        float v105 = lf_subtract(v10, v104);
        float v106 = lf_square(v105);
        float v107 = lf_add(v100, v103);
        float v108 = lf_add(v107, v106);
        bool v109 = lf_isnan(v108);
        float v110 = lf_add(v108, v18);
        int v111 = lf_bits_i32(v110);
        long long v112 = lf_to_i64(v111);
        bool v113 = lf_less(v112, v22);
        long long v114 = lf_bitwise_xor(v112, v17);
        long long v115 = (v113 ? v114 : v112);
        long long v116 = lf_invert(v115);
        long long v117 = (v109 ? v17 : v116);
        long long v118 = lf_multiply(v117, v28);
        long long v119 = lf_to_i64((off18 + (v1 * st18_0)));
        long long v120 = arg4;
        long long v121 = arg2;
        long long v122 = lf_multiply(v119, v120);
        long long v123 = lf_add(v122, v121);
        long long v124 = lf_multiply(v123, v35);
        long long v125 = lf_add(v124, v37);
        long long v126 = lf_add(v118, v125);
        long long v127 = lf_maximum(v39, v68);
        long long v128 = lf_maximum(v97, v126);
        long long v129 = lf_maximum(v127, v128);
        long long v130 = lf_bitwise_and(v129, v37);
        long long v131 = lf_multiply(v130, v35);
        long long v132 = lf_add(v131, v37);
        out0[v0] = v132;
    }
}
