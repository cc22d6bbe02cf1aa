module turnstile/examples/go

go 1.26.0

require github.com/turnstile-locks/turnstile/clients/go v0.0.0

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The library lives in this repository; a project of your own uses `go get` instead.
replace github.com/turnstile-locks/turnstile/clients/go => ../../clients/go
