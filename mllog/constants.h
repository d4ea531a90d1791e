// The standard MLLOG keys and values, as the consortium's Python package
// names them (mlcommons/logging, mlperf_logging/mllog/constants.py): each
// Python name NAME_IN_CAPS is kNameInCaps here, with the same string.
//
// The namespace is inline, so both referee::mllog::kEvalAccuracy and
// referee::mllog::constants::kEvalAccuracy name the same constant; a
// training program can say `using namespace referee::mllog::constants;`.
//
// Which keys a benchmark must log, and with which values, is decided by the
// rule files of its round (compliance_checker/training_X.Y.Z/*.yaml), not
// by this list.
#pragma once

#include <string_view>

namespace referee::mllog {
inline namespace constants {

// ---- Log settings
inline constexpr std::string_view kDefaultLoggerName = "mllog_default";
inline constexpr std::string_view kDefaultNamespace = "";

// ---- Event types (the "event_type" field)
inline constexpr std::string_view kIntervalEnd = "INTERVAL_END";
inline constexpr std::string_view kIntervalStart = "INTERVAL_START";
inline constexpr std::string_view kPointInTime = "POINT_IN_TIME";

// ---- Values of submission_division
inline constexpr std::string_view kClosed = "closed";
inline constexpr std::string_view kOpen = "open";

// ---- Values of submission_status
inline constexpr std::string_view kOnprem = "onprem";
inline constexpr std::string_view kCloud = "cloud";
inline constexpr std::string_view kResearch = "research";
// Accepted by the rules (common.yaml) but not in constants.py.
inline constexpr std::string_view kPreview = "preview";

// ---- Values of submission_benchmark
inline constexpr std::string_view kDlrmDcnv2 = "dlrm_dcnv2";
inline constexpr std::string_view kGnmt = "gnmt";
inline constexpr std::string_view kMaskrcnn = "maskrcnn";
inline constexpr std::string_view kMinigo = "minigo";
inline constexpr std::string_view kNcf = "ncf";
inline constexpr std::string_view kResnet = "resnet";
inline constexpr std::string_view kSsd = "ssd";
inline constexpr std::string_view kRetinanet = "retinanet";
inline constexpr std::string_view kStableDiffusion = "stable_diffusion";
inline constexpr std::string_view kTransformer = "transformer";
inline constexpr std::string_view kRnnt = "rnnt";
inline constexpr std::string_view kUnet3d = "unet3d";
inline constexpr std::string_view kBert = "bert";
inline constexpr std::string_view kGpt3 = "gpt3";
inline constexpr std::string_view kLlama270bLora = "llama2_70b_lora";
inline constexpr std::string_view kGnn = "gnn";
inline constexpr std::string_view kRgat = "rgat";

// ---- Values of opt_name
inline constexpr std::string_view kAdagrad = "adagrad";
inline constexpr std::string_view kAdam = "adam";
inline constexpr std::string_view kAdamw = "adamw";
inline constexpr std::string_view kLars = "lars";
inline constexpr std::string_view kLazyAdam = "lazy_adam";
inline constexpr std::string_view kSgd = "sgd";
inline constexpr std::string_view kLamb = "lamb";

// ---- Values of the "status" metadata of run_stop
inline constexpr std::string_view kAborted = "aborted";
inline constexpr std::string_view kSuccess = "success";

// ---- Keys: submission info
inline constexpr std::string_view kSubmissionBenchmark = "submission_benchmark";
inline constexpr std::string_view kSubmissionDivision = "submission_division";
inline constexpr std::string_view kSubmissionEntry = "submission_entry";
inline constexpr std::string_view kSubmissionOrg = "submission_org";
inline constexpr std::string_view kSubmissionPlatform = "submission_platform";
inline constexpr std::string_view kSubmissionPocName = "submission_poc_name";
inline constexpr std::string_view kSubmissionPocEmail = "submission_poc_email";
inline constexpr std::string_view kSubmissionStatus = "submission_status";

// ---- Keys: timing
inline constexpr std::string_view kBlockStart = "block_start";
inline constexpr std::string_view kBlockStop = "block_stop";
inline constexpr std::string_view kEpochStart = "epoch_start";
inline constexpr std::string_view kEpochStop = "epoch_stop";
inline constexpr std::string_view kEvalStart = "eval_start";
inline constexpr std::string_view kEvalStop = "eval_stop";
inline constexpr std::string_view kInitStart = "init_start";
inline constexpr std::string_view kInitStop = "init_stop";
inline constexpr std::string_view kStagingStart = "staging_start";
inline constexpr std::string_view kStagingStop = "staging_stop";
inline constexpr std::string_view kRunStart = "run_start";
inline constexpr std::string_view kRunStop = "run_stop";

// ---- Keys: common run info
inline constexpr std::string_view kCacheClear = "cache_clear";
inline constexpr std::string_view kEvalAccuracy = "eval_accuracy";
inline constexpr std::string_view kEvalSamples = "eval_samples";
inline constexpr std::string_view kSeed = "seed";
inline constexpr std::string_view kTrainSamples = "train_samples";
inline constexpr std::string_view kTrainedSamples = "trained_samples";
inline constexpr std::string_view kWeightsInitialization = "weights_initialization";

// ---- Keys: model hyperparameters
inline constexpr std::string_view kGlobalBatchSize = "global_batch_size";
inline constexpr std::string_view kGradientAccumulationSteps = "gradient_accumulation_steps";
inline constexpr std::string_view kLarsEpsilon = "lars_epsilon";
inline constexpr std::string_view kLarsOptBaseLearningRate = "lars_opt_base_learning_rate";
inline constexpr std::string_view kLarsOptEndLr = "lars_opt_end_learning_rate";
inline constexpr std::string_view kLarsOptLearningRateWarmupEpochs = "lars_opt_learning_rate_warmup_epochs";
inline constexpr std::string_view kLarsOptLrDecayPolyPower = "lars_opt_learning_rate_decay_poly_power";
inline constexpr std::string_view kLarsOptLrDecaySteps = "lars_opt_learning_rate_decay_steps";
inline constexpr std::string_view kLarsOptMomentum = "lars_opt_momentum";
inline constexpr std::string_view kLarsOptWeightDecay = "lars_opt_weight_decay";
inline constexpr std::string_view kMaxImageSize = "max_image_size";
inline constexpr std::string_view kMaxSamples = "max_samples";
inline constexpr std::string_view kMaxSequenceLength = "max_sequence_length";
inline constexpr std::string_view kMinImageSize = "min_image_size";
inline constexpr std::string_view kModelBnSpan = "model_bn_span";
inline constexpr std::string_view kNumImageCandidates = "num_image_candidates";
inline constexpr std::string_view kNumWarmupSteps = "num_warmup_steps";
inline constexpr std::string_view kOptAdagradEpsilon = "opt_adagrad_epsilon";
inline constexpr std::string_view kOptAdagradInitialAccumulatorValue = "opt_adagrad_initial_accumulator_value";
inline constexpr std::string_view kOptAdagradLrDecay = "opt_adagrad_learning_rate_decay";
inline constexpr std::string_view kOptAdamwBeta1 = "opt_adamw_beta_1";
inline constexpr std::string_view kOptAdamwBeta2 = "opt_adamw_beta_2";
inline constexpr std::string_view kOptAdamwEpsilon = "opt_adamw_epsilon";
inline constexpr std::string_view kOptAdamwWeightDecay = "opt_adamw_weight_decay";
inline constexpr std::string_view kOptAdamBeta1 = "opt_adam_beta_1";
inline constexpr std::string_view kOptAdamBeta2 = "opt_adam_beta_2";
inline constexpr std::string_view kOptAdamEpsilon = "opt_adam_epsilon";
inline constexpr std::string_view kOptName = "opt_name";
inline constexpr std::string_view kOptBaseLr = "opt_base_learning_rate";
inline constexpr std::string_view kOptEndLr = "opt_end_learning_rate";
inline constexpr std::string_view kOptLambLrMin = "opt_lamb_learning_rate_min";
inline constexpr std::string_view kOptLambLrDecayPolyPower = "opt_lamb_learning_rate_decay_poly_power";
inline constexpr std::string_view kOptLambWeightDecay = "opt_lamb_weight_decay_rate";
inline constexpr std::string_view kOptLambBeta1 = "opt_lamb_beta_1";
inline constexpr std::string_view kOptLambBeta2 = "opt_lamb_beta_2";
inline constexpr std::string_view kOptLambEpsilon = "opt_lamb_epsilon";
inline constexpr std::string_view kOptLambLrHoldEpochs = "opt_lamb_learning_rate_hold_epochs";
inline constexpr std::string_view kOptLrAltDecayFunc = "opt_learning_rate_alt_decay_func";
inline constexpr std::string_view kOptLrAltWarmupFunc = "opt_learning_rate_alt_warmup_func";
inline constexpr std::string_view kOptLrDecayBoundaryEpochs = "opt_learning_rate_decay_boundary_epochs";
inline constexpr std::string_view kOptLrDecayBoundarySteps = "opt_learning_rate_decay_boundary_steps";
inline constexpr std::string_view kOptLrDecayFactor = "opt_learning_rate_decay_factor";
inline constexpr std::string_view kOptLrDecayInterval = "opt_learning_rate_decay_interval";
inline constexpr std::string_view kOptLrDecayStartStep = "opt_learning_rate_decay_start_step";
inline constexpr std::string_view kOptLrDecaySteps = "opt_learning_rate_decay_steps";
inline constexpr std::string_view kOptLrDecaySchedule = "opt_learning_rate_decay_schedule";
inline constexpr std::string_view kOptLrRemainSteps = "opt_learning_rate_remain_steps";
inline constexpr std::string_view kOptLrTrainingSteps = "opt_learning_rate_training_steps";
inline constexpr std::string_view kOptLrWarmupEpochs = "opt_learning_rate_warmup_epochs";
inline constexpr std::string_view kOptLrWarmupFactor = "opt_learning_rate_warmup_factor";
inline constexpr std::string_view kOptLrWarmupSteps = "opt_learning_rate_warmup_steps";
inline constexpr std::string_view kOptWeightDecay = "opt_weight_decay";
inline constexpr std::string_view kOptGradientClipNorm = "opt_gradient_clip_norm";
// "perturbaton" (sic): the consortium's spelling, which the logs carry.
inline constexpr std::string_view kDataSpeedPerturbatonMax = "data_speed_perturbaton_max";
inline constexpr std::string_view kDataSpeedPerturbatonMin = "data_speed_perturbaton_min";
inline constexpr std::string_view kDataSpecAugmentFreqN = "data_spec_augment_freq_n";
inline constexpr std::string_view kDataSpecAugmentFreqMin = "data_spec_augment_freq_min";
inline constexpr std::string_view kDataSpecAugmentFreqMax = "data_spec_augment_freq_max";
inline constexpr std::string_view kDataSpecAugmentTimeN = "data_spec_augment_time_n";
inline constexpr std::string_view kDataSpecAugmentTimeMin = "data_spec_augment_time_min";
inline constexpr std::string_view kDataSpecAugmentTimeMax = "data_spec_augment_time_max";
inline constexpr std::string_view kDataTrainNumBuckets = "data_train_num_buckets";
inline constexpr std::string_view kDataTrainMaxDuration = "data_train_max_duration";
inline constexpr std::string_view kDataNumBuckets = "data_num_buckets";
inline constexpr std::string_view kModelEvalEmaFactor = "model_eval_ema_factor";
inline constexpr std::string_view kModelWeightsInitializationScale = "model_weights_initialization_scale";
inline constexpr std::string_view kEvalMaxPredictionSymbols = "eval_max_prediction_symbols";
inline constexpr std::string_view kStartWarmupStep = "start_warmup_step";
inline constexpr std::string_view kInitCheckpointStep = "init_checkpoint_step";
inline constexpr std::string_view kLoraAlpha = "lora_alpha";

// ---- Keys: misc.
inline constexpr std::string_view kBbox = "bbox";
inline constexpr std::string_view kSegm = "segm";

// ---- Metadata keys
inline constexpr std::string_view kEpochCount = "epoch_count";
inline constexpr std::string_view kEpochNum = "epoch_num";
inline constexpr std::string_view kFirstEpochNum = "first_epoch_num";
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kStepNum = "step_num";
inline constexpr std::string_view kSamplesCount = "samples_count";

// ---- Power
inline constexpr std::string_view kPowerMeasurementStart = "power_measurement_start";
inline constexpr std::string_view kPowerMeasurementStop = "power_measurement_stop";
inline constexpr std::string_view kPowerReading = "power_reading";
// CONVERTION_EFF (sic) in constants.py.
inline constexpr std::string_view kConvertionEff = "conversion_eff";
inline constexpr std::string_view kInterconnectPowerEst = "interconnect_power_est";

}  // namespace constants
}  // namespace referee::mllog
