package main

import (
	"strconv"

	"github.com/onekube/onekube/flow"
	"github.com/spf13/pflag"
)

// intFlag and floatFlag are pflag values read by flow's strict decimal
// parsers: pflag's own IntVar reads "010" as 8 and "0x10" as 16 (base 0),
// and Float64Var takes "NaN", "Inf" and "1e-300".
type intFlag struct{ p *int }

func (f intFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.Itoa(*f.p)
}

func (f intFlag) Set(s string) error {
	n, err := flow.ParseDecimalInt(s)
	if err != nil {
		return err
	}
	*f.p = n
	return nil
}

func (intFlag) Type() string { return "int" }

type floatFlag struct{ p *float64 }

func (f floatFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'f', -1, 64)
}

func (f floatFlag) Set(s string) error {
	v, err := flow.ParseDecimalFloat(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

func (floatFlag) Type() string { return "float" }

// decimalInt and decimalFloat register the flags as IntVar and Float64Var
// would, with a zero default.
func decimalInt(fs *pflag.FlagSet, p *int, name, usage string) {
	fs.Var(intFlag{p}, name, usage)
}

func decimalFloat(fs *pflag.FlagSet, p *float64, name, usage string) {
	fs.Var(floatFlag{p}, name, usage)
}
