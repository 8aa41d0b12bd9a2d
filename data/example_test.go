package data_test

import (
	"bytes"
	"fmt"

	"github.com/shuffledp/shuffledp/data"
)

func ExampleReadIDX() {
	// A 2x2 unsigned-byte image, one item.
	raw, _ := data.EncodeIDXUint8([]int{1, 2, 2}, []byte{0, 51, 204, 255})
	f, err := data.ReadIDX(bytes.NewReader(raw))
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Dims, f.Data)
	// Output: [1 2 2] [0 51 204 255]
}
