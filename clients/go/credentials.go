package turnstile

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// LoadTLS builds a TLS configuration from PEM files: caFile verifies the coordinator (""
// uses the system roots), certFile and keyFile are the client certificate for mTLS (both or
// neither). The errors name the file that could not be used.
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("turnstile: tls ca: %w", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("turnstile: tls ca: no PEM certificate in %s", caFile)
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("turnstile: tls cert and key go together: set both or neither")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("turnstile: tls cert/key: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// dialOptions turns Options into grpc-go options: plaintext or TLS, the bearer token, and HTTP/2
// keepalive pings so a coordinator that died without a word is noticed (grpc-go's floor is 10 s).
func dialOptions(o Options) ([]grpc.DialOption, error) {
	if o.Token != "" && o.TLS == nil {
		return nil, &Error{Reason: ReasonInvalidArgument, Message: "options.Token: a bearer token is sent over TLS only (set options.TLS)"}
	}
	transport := insecure.NewCredentials()
	if o.TLS != nil {
		transport = credentials.NewTLS(o.TLS)
	}
	options := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
	}
	if o.Token != "" {
		options = append(options, grpc.WithPerRPCCredentials(bearerToken(o.Token)))
	}
	return append(options, o.DialOptions...), nil
}

// bearerToken sends "authorization: Bearer <token>" with every call (streams included).
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return true }
