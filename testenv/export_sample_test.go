package testenv

// ReadSampleError is ReadSample's error path.
var ReadSampleError = readSample
