module babelqueue-cpp/bench/peers/go

go 1.19
