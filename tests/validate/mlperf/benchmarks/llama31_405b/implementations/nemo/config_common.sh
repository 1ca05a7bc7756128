# Shared settings of the fixture configs (the layout NVIDIA's MLPerf configs use).
export SEQ_PARALLEL=True
export MICRO_BATCH_SIZE=${MICRO_BATCH_SIZE:-1}
export FP8=False
