module iobound.dev/contenders/go

go 1.22
