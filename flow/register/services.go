package register

import (
	"context"
	"net/http"
	"strconv"
)

// Services lists the services the caller can see (GET /service), for
// finding one by name.
func (c *FlowClient) Services(ctx context.Context) ([]Document, error) {
	return c.pool(ctx, "/service", "service")
}

// Service returns OneFlow's document of service id (GET /service/:id) as it
// came; flow/status decodes it.
func (c *FlowClient) Service(ctx context.Context, id int) ([]byte, error) {
	return c.do(ctx, http.MethodGet, "/service/"+strconv.Itoa(id), nil)
}
