package node

import "fmt"

// ErrAlreadyInitialized: Init found a configuration or genesis file in Home and was not
// told to overwrite it.
type ErrAlreadyInitialized struct{ Home string }

func (e ErrAlreadyInitialized) Error() string {
	return fmt.Sprintf("%s is already initialized", e.Home)
}

// ErrNotInitialized: Start found no configuration or genesis file in Home.
type ErrNotInitialized struct{ Home string }

func (e ErrNotInitialized) Error() string {
	return fmt.Sprintf("%s is not initialized: run ttld init first", e.Home)
}
