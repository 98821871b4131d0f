//! Several processes on one journal file. Worker processes are this test binary,
//! re-invoked on `worker_process` with `SATURATE_STUDY_WORKER` set.
